"""What a profile says, for people and for CI: terminal tables, Markdown, HTML, the CI formats, plots."""

# The gate's report formats (`vocabrisk.report.ci`), named here so that the command line can offer
# them without importing the reports.
CI_FORMATS = ("text", "json", "github", "junit", "markdown", "sarif")
