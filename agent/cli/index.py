"""`litloop index ...`: build, add to, inspect, compact, upgrade and clean an index, and the
helpers every command uses to open one (the given index, the named corpora, or the demo index,
built on first use).

Registered on the main command by `register(app)`. Only typer and rich load here; the index
package loads inside the commands.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agent.cli.common import IndexOpt, JsonOpt, err, fail, out, progress, reports_problems
from agent.cli.corpora import CorpusOpt, open_named
from agent.cli.render import print_index_info, print_paper
from agent.records.progress import plural
from agent.settings import Settings, get_settings

index_app = typer.Typer(help="Build and inspect indexes.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(index_app, name="index")


def settings_for(index: Path | None = None) -> Settings:
    return get_settings(index=index)


@contextmanager
def using_index(index: Path | None, corpus: list[str] | None = None) -> Iterator:
    """`open_index_or_demo`'s index for one command, closed whatever happens; a bad value met while using it
    (a malformed id or query option) is a one-line error like the problems `reports_problems` maps, and a
    paper id the index does not hold (`agent.api.papers.UnknownPaper`) exits with status 2, as a usage error."""
    from agent.api.papers import UnknownPaper

    idx = open_index_or_demo(index, corpus)
    try:
        yield idx
    except ValueError as exc:
        raise fail(str(exc), 2 if isinstance(exc, UnknownPaper) else 1) from None
    finally:
        idx.close()


def open_index_or_demo(index: Path | None, corpus: list[str] | None = None):
    """Open the named corpora, or the given index, or the configured one, or the demo index
    (built on first use)."""
    from tools.index import open_index

    if corpus:
        return open_named(corpus, index)

    settings = settings_for(index)
    if settings.index is None:
        from tools.corpora.demo import ensure_demo_index

        if not (settings.demo_index / "CURRENT").exists():
            err.print(f"[dim]Building the demo index in {settings.demo_index} (first use, a few minutes)...[/]")
        ensure_demo_index(settings, progress=progress())
        return open_index(settings.demo_index, settings)
    return open_index(settings.index, settings)


@index_app.command("build")
@reports_problems
def index_build(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Files or folders of JSONL records, S2ORC JSON, GROBID TEI XML (.tei.xml) and PDFs."),
    ],
    index: Annotated[Path, typer.Option("--index", "-i", help="Index directory to create or add to.")],
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Start a new index instead of adding to the existing one.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail (writing nothing) on any bad input instead of skipping it.")
    ] = False,
    embeddings: Annotated[
        Path | None,
        typer.Option(
            "--embeddings",
            help="Window vectors computed elsewhere (.npz: ids, vectors, model; or .jsonl), "
            "imported instead of embedding those windows (see `index export-windows`).",
        ),
    ] = None,
    ray: Annotated[
        bool,
        typer.Option(
            "--ray",
            help="Parse, chunk and embed on Ray (pip install 'litloop[ray]'): a local Ray instance "
            "started for the build, or the cluster of --ray-address; GPU workers are used when present.",
        ),
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            metavar="ADDRESS",
            help="Build on this Ray cluster (implies --ray): `auto` for the one "
            "`ray start --head` began on this machine, or HOST:6379 (its GCS address).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Index papers; an existing index gets only the new papers (nothing is re-embedded)."""
    from tools.index import BuildFailed, build_index

    settings = settings_for(index)
    on_ray = ray or ray_address is not None
    loader = None
    if on_ray:
        from tools.index.ray_build import ray_loader

        if embeddings is not None:
            raise fail("--embeddings and --ray: give one (Ray computes every window's vector itself)")
        loader = ray_loader(settings, ray_address, progress=progress())
    try:
        report = build_index(
            paths,
            index,
            settings,
            rebuild=rebuild,
            strict=strict,
            progress=progress(),
            embeddings=embeddings,
            loader=loader,
        )
    except BuildFailed as exc:
        for p in exc.problems:
            err.print(f"[yellow]problem:[/] {escape(p)}")
        raise fail(str(exc)) from None
    if as_json:
        out.print_json(json.dumps(report.to_dict()))
        return
    for p in report.problems:
        err.print(f"[yellow]skipped:[/] {escape(p)}")
    for loss in report.text_losses:
        err.print(f"[yellow]warning:[/] {escape(loss['message'])}")
    t = report.totals
    out.print(
        f"[green]Indexed[/] {report.papers_added} new papers ({report.chunks_added} chunks, "
        f"{report.windows_embedded} embedded windows, {report.references_resolved} references resolved) "
        f"into {index}"
    )
    if on_ray:
        out.print(
            f"{report.windows_imported} windows embedded on Ray"
            + (f", {report.windows_embedded} here" if report.windows_embedded else "")
        )
    if embeddings is not None:
        out.print(
            f"{report.windows_imported} windows imported from {escape(str(embeddings))}, "
            f"{report.windows_embedded} embedded here"
            + (f"; {report.vectors_ignored} vectors for unknown ids ignored" if report.vectors_ignored else "")
        )
    if report.already_indexed:
        out.print(f"{report.already_indexed} papers of the input were already in the index (skipped).")
    if report.ligature_words:
        out.print(
            f"Repaired {plural(report.ligature_words, 'word')} in {plural(report.ligature_papers, 'paper')} "
            "whose text had lost a ligature in extraction ('speci c' -> 'specific'); the repaired text is what is indexed and quoted."
        )
    if t:
        out.print(f"Index now holds {t['papers']} papers, {t['chunks']} chunks, {t['citation_edges']} citation edges.")


@index_app.command("export-windows")
@reports_problems
def index_export_windows(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="The JSONL file to write.")],
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Papers to cut into windows without building an index (as `index build` reads them). "
            "Without: the windows of the index's chunks."
        ),
    ] = None,
    index: IndexOpt = None,
) -> None:
    """Write the windows a build embeds ({"id", "chunk_id", "text"} a line), of the given papers or
    of the index's chunks, for a job elsewhere to embed and `index build --embeddings` to import."""
    from tools.index.vector_file import export_input_windows, export_windows

    if paths:
        settings = settings_for(index)
        n, problems = export_input_windows(paths, settings, out_file)
        for p in problems:
            err.print(f"[yellow]problem:[/] {escape(p)}")
        if not n:
            raise fail("no papers could be read from the input; nothing to embed")
        out.print(
            f"Wrote {n} windows to {escape(str(out_file))}; embed them with "
            f"{escape(settings.embedder.model)} and save ids, vectors and "
            f"model={escape(settings.embedder.model)} in an .npz"
        )
        return
    with using_index(index) as idx:
        n = export_windows(idx, out_file)
        e = idx.manifest.embedder
    out.print(
        f"Wrote {n} windows to {escape(str(out_file))}; embed them with {escape(e.name)} "
        f"({e.dim}-d) and save ids, vectors and model={escape(e.name)} in an .npz"
    )


@index_app.command("info")
@reports_problems
def index_info_cmd(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Counts per chunk kind, papers, citation edges, embedder and sizes."""
    from tools.index import index_info

    settings = settings_for(index)
    root = settings.resolved_index
    info = index_info(root, settings)
    if as_json:
        out.print_json(json.dumps(info))
        return
    print_index_info(root, info)


@index_app.command("compact")
@reports_problems
def index_compact(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Merge the index's segments (one per build or add) into one; searches then ask one of each
    store. Rewrites every chunk and vector, so it takes about as long as the build did without
    the embedding; readers keep the version they opened meanwhile."""
    from tools.index import compact_index

    settings = settings_for(index)
    report = compact_index(settings.resolved_index, settings, progress=progress())
    if as_json:
        out.print_json(json.dumps(report.to_dict()))
    elif report.segments_before <= 1:
        out.print(f"Nothing to compact: the index is {report.segments_before} segment.")
    else:
        out.print(
            f"Merged {report.segments_before} segments into 1 ({report.chunks} chunks, {report.windows} "
            f"vectors) in {report.seconds:.1f} s."
        )


@index_app.command("gc")
@reports_problems
def index_gc(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Remove the superseded versions no reader holds, the segments no version names and what
    interrupted builds left (builds, adds and compactions do the same after their switch)."""
    from tools.index import gc_index

    settings = settings_for(index)
    result = gc_index(settings.resolved_index, settings)
    if as_json:
        out.print_json(json.dumps(result))
        return
    out.print(
        f"Removed {len(result['versions_removed'])} version(s), {len(result['segments_removed'])} "
        f"segment(s) and {len(result['interrupted_removed'])} interrupted build(s)."
    )
    if result["versions_kept"]:
        out.print(f"Kept {len(result['versions_kept'])} superseded version(s) a reader still holds.")


@index_app.command("upgrade")
@reports_problems
def index_upgrade(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Convert an index written by an earlier litloop (format 1) to this format in place, keeping
    its embeddings (nothing is re-embedded); readers keep the old version until they reopen."""
    from tools.index import upgrade_index

    settings = settings_for(index)
    result = upgrade_index(settings.resolved_index, settings, progress=progress())
    if as_json:
        out.print_json(json.dumps(result))
    elif not result["upgraded"]:
        out.print(f"Nothing to do: the index is already format {result['format_version']}.")
    else:
        out.print(
            f"Upgraded to format {result['format_version']} ({result['chunks']} chunks) in {result['seconds']:.1f} s."
        )


@index_app.command("show")
@reports_problems
def index_show(
    paper_id: Annotated[
        str, typer.Argument(help="The paper's id (as `litloop search` shows it; CORPUS:ID over several corpora).")
    ],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What the index holds for one paper: its record and its chunks in order (kind, locator, text)."""
    from agent.api.papers import paper_record

    with using_index(index, corpus) as idx:
        paper, chunks, record = paper_record(idx, paper_id)
    if as_json:
        out.print_json(record.model_dump_json())
        return
    print_paper(paper, chunks, record.text_loss)


# ----------------------------------------------------------------------------- search
