"""The `vocabrisk` command line: the stages wired together, nothing else.

`commands` holds the commands, `options` the flags several share, `settings` what the corpus flags become,
`config` the configuration file under the flags, and `output` where a command's output goes and how it ends.
"""

from vocabrisk.cli.commands import main as main
