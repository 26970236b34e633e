"""What a profile says, for people and for CI: terminal tables, Markdown, HTML, the CI formats, plots."""
