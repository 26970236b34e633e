"""datatrove steps: profile a corpus while a pipeline builds it, with no second pass over the files.

`ProfileCounter` counts the documents flowing through it with the model's tokenizer, exactly as
`vocabrisk scan` counts the records of a file (same special-token policy, long documents in pieces,
the same skip rules), passes them on untouched and, at the end of each task, writes that task's
partial profile to a `DataFolder` (local or remote: anything fsspec reaches). `ProfileMerger`, in a
pipeline of its own with one task, adds the partials up into one profile, byte for byte the one
`vocabrisk scan` gives for the same files whatever the number of tasks and the order they ran in;
`merge_profile` does the same from Python.

    count = LocalPipelineExecutor(
        [JsonlReader("data/"), ProfileCounter("partials/", model="gpt2"), JsonlWriter("out/")],
        tasks=4, logging_dir="logs/count",
    )
    merge = LocalPipelineExecutor(
        [ProfileMerger("partials/", "profiles/data")], tasks=1, logging_dir="logs/merge", depends=count
    )
    merge.run()

Each document's source is the file its reader names (`metadata["file_path"]`, which datatrove's
disk readers add): the profile's `sources` list each file as a scan lists it, with the documents
and skips counted in it. A document that the step cannot count (text the model cannot read, a run
too long to cut) is skipped and reported as "document ID". Records the reader itself drops (a line
that is not JSON, a record without the text field) never reach the step: for those a scan of the files
reports skips the pipeline's profile does not.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from vocabrisk.corpus import ReadOptions
from vocabrisk.corpus.datatypes import field_names
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.counting.inputs import count_job
from vocabrisk.errors import ModelError, require
from vocabrisk.integrations.partials import (
    NO_FILE,
    SUFFIX,
    TaskCounts,
    document_items,
    identity,
    merge_partials,
    partial_name,
)
from vocabrisk.model.loaded import load_model
from vocabrisk.prior.choose import AUTO
from vocabrisk.profile.profile import PROFILE_FILES, PROFILE_JSON, Profile
from vocabrisk.storage.outputs import OutputError, write_atomic

try:
    from datatrove.data import Document, DocumentsPipeline
    from datatrove.io import DataFolder, DataFolderLike, get_datafolder
    from datatrove.pipeline.base import PipelineStep
    from fsspec.implementations.local import LocalFileSystem
except ImportError:
    require("datatrove", "datatrove", "vocabrisk.integrations.datatrove")  # names the extra to install
    raise

__all__ = ["ProfileCounter", "ProfileMerger", "merge_profile"]


class ProfileCounter(PipelineStep):
    """Count the documents passing through with MODEL's tokenizer into one partial profile per task.

    `output_folder` is where each task writes its partial (`00000.npz` for task 0), a path, URL or
    `DataFolder`; give each run a folder of its own. `policy` is the special-token policy, as for
    `vocabrisk.scan`. `text_field` is the field the reader took each document's text from (its
    `text_key`), recorded as a scan's `--text-field` is, so that the profile says how to read the
    files again. The model is loaded in each task (a name or path: it travels to the workers as such).
    """

    name = "🧮 vocabrisk profile"
    type = "🔢 - TOKENIZER"

    def __init__(
        self,
        output_folder: DataFolderLike | os.PathLike,
        model: str | os.PathLike = "demo",
        *,
        policy: SpecialTokenPolicy | None = None,
        text_field: str | Sequence[str] = "text",
    ):
        super().__init__()
        if not isinstance(model, str | os.PathLike):
            raise ModelError(
                f"the model must be a name or a path, not {type(model).__name__}",
                hint="pass 'demo', a model folder, a .gguf file or a hub id: each task loads it",
            )
        self.output_folder = _folder(output_folder)
        self.model = os.fspath(model)
        self.policy = policy or SpecialTokenPolicy()
        self.read_options = ReadOptions(text_fields=field_names(text_field))

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        loaded = load_model(self.model, counted_here=True)
        job = count_job(loaded, self.policy, self.read_options, strict=False)
        counted_with = identity(loaded, self.model, self.policy, self.read_options) | {
            "written_to": _where(self.output_folder)  # a partial moved beside another run's says so
        }
        task = TaskCounts(job, self.read_options, counted_with)
        passing: list[Document] = []  # read from upstream, not yet handed on

        def items() -> Iterator:
            for document in data or ():
                passing.append(document)
                source = str(document.metadata.get("file_path") or NO_FILE)
                yield from document_items(document.text, source, f"document {document.id}")

        for _ in task.count(items()):
            yield from passing
            passing.clear()
        yield from passing
        partial = task.to_bytes(rank, world_size)
        if isinstance(self.output_folder.fs, LocalFileSystem):  # a task killed mid-write leaves no partial cut short
            write_atomic(Path(self.output_folder.path) / partial_name(rank), partial, "partial profile")
        else:  # an object store's object appears whole, when the upload completes
            with self.output_folder.open(partial_name(rank), "wb") as file:
                file.write(partial)
        skipped = sum(tally.skips.total for tally in task.sources.values())
        self.stat_update("documents_counted", value=task.counts.documents, unit="task")
        self.stat_update("tokens_counted", value=task.counts.tokens, unit="task")
        self.stat_update("documents_skipped", value=skipped, unit="task")


def merge_profile(
    partials_folder: DataFolderLike | os.PathLike,
    model: str | os.PathLike | None = None,
    *,
    reference: Sequence[str] | Profile | str | None = AUTO,
    prior: str = AUTO,
) -> Profile:
    """The profile of every task's partial in PARTIALS_FOLDER (what `ProfileCounter` wrote there).

    MODEL defaults to the one the tasks counted with; `reference` and `prior` choose the prior as for
    `vocabrisk.scan`. An error names what is wrong when a task's partial is missing, unreadable or of
    another run.
    """
    folder = _folder(partials_folder)
    names = folder.list_files(glob_pattern=f"*{SUFFIX}", recursive=False)
    where = _where(folder)

    def partials() -> Iterator[tuple[str, bytes]]:
        for name in names:
            with folder.open(name, "rb") as file:
                yield f"{where}/{name}", file.read()

    return merge_partials(partials(), model, reference=reference, prior=prior, where=where)


class ProfileMerger(PipelineStep):
    """Merge the partials `ProfileCounter` wrote into one profile, saved to `output_folder` (a path,
    URL or `DataFolder`). Run it with one task, after the counting pipeline (`depends=`); documents
    given to it pass through.

    `force` replaces a profile already saved there, as `vocabrisk scan --force` does; `model`,
    `reference` and `prior` are those of `merge_profile`.
    """

    name = "🧮 vocabrisk merge"
    type = "📊 - STATS"

    def __init__(
        self,
        partials_folder: DataFolderLike | os.PathLike,
        output_folder: DataFolderLike | os.PathLike,
        model: str | os.PathLike | None = None,
        *,
        reference: Sequence[str] | str | None = AUTO,
        prior: str = AUTO,
        force: bool = False,
    ):
        super().__init__()
        self.partials_folder = _folder(partials_folder)
        self.output_folder = _folder(output_folder)
        self.model = model
        self.reference = reference
        self.prior = prior
        self.force = force

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if data:
            yield from data
        if rank != 0:
            return
        profile = merge_profile(self.partials_folder, self.model, reference=self.reference, prior=self.prior)
        save_to_folder(profile, self.output_folder, self.force)
        self.stat_update("tokens_counted", value=profile.total_tokens, unit="profile")


def save_to_folder(profile: Profile, folder: DataFolder, force: bool = False) -> None:
    """`Profile.save` into FOLDER; on a remote filesystem saved here first, then uploaded file by file."""
    if isinstance(folder.fs, LocalFileSystem):
        profile.save(folder.path, force=force)
        return
    if folder.isfile(PROFILE_JSON) and not force:
        raise OutputError(
            f"{_where(folder)}: a saved profile is already there; refusing to overwrite it",
            hint="pass force=True to replace it, or save elsewhere",
        )
    with tempfile.TemporaryDirectory(prefix="vocabrisk-") as staging:
        saved = profile.save(Path(staging) / "profile")
        for name in PROFILE_FILES[::-1]:  # profile.json last: a reader never finds it before the files it lists
            if (saved / name).exists():
                folder.put_file(str(saved / name), name)
            elif folder.isfile(name):
                folder.rm_file(name)  # an earlier profile's, which this one does not have


def _folder(folder: DataFolderLike | os.PathLike) -> DataFolder:
    """A path, URL, (path, filesystem options), (path, filesystem) or DataFolder, as a DataFolder."""
    return get_datafolder(os.fspath(folder) if isinstance(folder, os.PathLike) else folder)


def _where(folder: DataFolder) -> str:
    return folder.path if isinstance(folder.fs, LocalFileSystem) else folder.fs.unstrip_protocol(folder.path)
