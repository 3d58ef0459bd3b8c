"""The terminal chat (`litloop chat`): steps as they happen, the cited answer, history per thread.

Commands: /new (a fresh conversation), /threads (list; /open ID to switch), /history (this
conversation so far), /trace (the run tree of the last answer; /trace N for the N-th), /dropped
(the claims the support check dropped from the last answer, with why), /cites and /refs
(who cites the paper of citation [N], a named paper or work, or row #K of the last listing; what
it cites; /back returns to the listing before), /help, /quit (or Ctrl-D). Conversations are the web chat's: same store, same follow-up handling.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape

from agent.chat import render
from agent.chat.cites_view import CannotFollow, Listing
from agent.chat.session import ChatStore, Turn, TurnFailed, ask_turn, question_problem
from agent.records.progress import Timeline

HELP = """[bold]/new[/] start a new conversation · [bold]/threads[/] list conversations · [bold]/open ID[/] switch to one
[bold]/history[/] this conversation so far · [bold]/trace [N][/] run tree of the last (or N-th) answer
[bold]/dropped [N][/] claims the support check dropped from the last (or N-th) answer, with why
[bold]/cites N|#K|WORK[/] who cites the paper of citation [N], row K of the last listing, or a paper id, ref: id or title words
[bold]/refs N|#K|PAPER[/] what that paper cites, each reference with its citing sentences · [bold]/back[/] the listing before
[bold]/help[/] this help · [bold]/quit[/] leave (or Ctrl-D). Anything else is a question; follow-ups use the conversation."""


DRAFT_CHARS = 400  # the end of a long draft is what a terminal line shows


class Draft:
    """The answer's words while the model writes them, as one live line under the steps
    ("writing: ..."), erased when the answer is whole: the checked answer is printed instead."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Any = None

    def show(self, text: str) -> None:
        from rich.live import Live
        from rich.text import Text

        shown = text if len(text) <= DRAFT_CHARS else "…" + text[-DRAFT_CHARS:]
        line = Text.assemble(("writing: ", "bold"), (shown, "dim"))
        if self.live is None:
            self.live = Live(line, console=self.console, transient=True, auto_refresh=False)
            self.live.start()
        self.live.update(line, refresh=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def around(self, step: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        """A run's `on_event`: draft events to this line, the others to `step`, the line erased
        when the answer comes."""

        def on_event(ev: dict[str, Any]) -> None:
            if ev.get("node") == "draft":
                self.show(str(ev.get("text") or ""))
                return
            if ev.get("node") == "synthesize":
                self.close()
            step(ev)

        return on_event


class TerminalChat:
    def __init__(
        self,
        store: ChatStore,
        console: Console,
        *,
        index: str | None = None,
        preset: str | None = None,
        read_line: Callable[[str], str] | None = None,
        corpora: list[str] | None = None,
    ) -> None:
        self.store = store
        self.console = console
        self.index = index
        self.preset = preset
        self.corpora = list(corpora or [])  # registered corpora to search instead of the index
        self.thread: str | None = None
        self.listings: list[Listing] = []  # what /cites and /refs showed, the last one current
        self.read_line = read_line or (lambda prompt: console.input(prompt))

    # -- the loop ------------------------------------------------------------------------------

    def loop(self) -> None:
        c = self.console
        c.print("[bold]litloop chat[/] · questions about your papers, answered with their evidence")
        c.print("[dim]/help for commands · /quit to leave[/]")
        if self.thread:
            self.show_history()
        while True:
            try:
                line = self.read_line("\n[bold cyan]you>[/] ").strip()
            except (EOFError, KeyboardInterrupt):
                c.print()
                return
            if not line:
                continue
            if line.startswith("/"):
                if not self.command(line):
                    return
                continue
            problem = question_problem(line)
            if problem:
                c.print(f"[yellow]{escape(problem)}[/]")
                continue
            self.ask(line)

    def command(self, line: str) -> bool:
        """Run a /command; False to leave."""
        name, _, arg = line.partition(" ")
        name, arg = name.lower(), arg.strip()
        c = self.console
        if name in ("/quit", "/exit", "/q"):
            return False
        if name == "/new":
            self.thread = None
            c.print("[green]New conversation.[/] The next question starts it.")
        elif name == "/threads":
            self.show_threads()
        elif name == "/open":
            if not arg or not self.open(arg):
                c.print(f"[red]No conversation {escape(arg or '(none given)')}.[/] /threads lists them.")
        elif name == "/history":
            self.show_history()
        elif name == "/trace":
            self.show_trace(arg)
        elif name == "/dropped":
            self.show_dropped(arg)
        elif name in ("/cites", "/refs"):
            self.follow("cites" if name == "/cites" else "refs", arg)
        elif name == "/back":
            self.back()
        elif name == "/help":
            c.print(HELP)
        else:
            c.print(f"[red]Unknown command {escape(name)}.[/]\n{HELP}")
        return True

    def open(self, thread_id: str) -> bool:
        t = self.store.thread(thread_id)
        if t is None:
            return False
        self.thread = t["thread_id"]
        self.console.print(f"[green]Conversation {t['thread_id']}[/]: {escape(t['title'])}")
        return True

    # -- asking --------------------------------------------------------------------------------

    def ask(self, question: str) -> Turn | None:
        if self.thread is None:
            self.thread = self.store.new_thread()
        timeline = Timeline()
        # in a terminal, the answer's words as the model writes them, erased once it is whole
        draft = Draft(self.console) if self.console.is_interactive else None

        def step(ev: dict[str, Any]) -> None:
            self.step(timeline, ev)

        try:
            turn = ask_turn(
                self.store,
                self.thread,
                question,
                preset=self.preset,
                index=self.index,
                on_event=draft.around(step) if draft is not None else step,
                corpora=self.corpora or None,
                stream_drafts=draft is not None,
            )
        except TurnFailed as exc:
            self.console.print(f"[bold red]The run failed:[/] {escape(exc.turn.error or str(exc))}")
            if exc.turn.trace_id:
                self.console.print(f"[dim]/trace shows where (trace {render.short_id(exc.turn.trace_id)})[/]")
            return exc.turn
        except KeyboardInterrupt:
            self.console.print("[yellow]Interrupted.[/]")
            return None
        finally:
            if draft is not None:
                draft.close()
        self.show_answer(turn)
        return turn

    def step(self, timeline: Timeline, ev: dict[str, Any]) -> None:
        """One progress event, printed as it arrives (round headers, then indented details)."""
        before = {s.key: len(s.lines) for s in timeline.stages}
        stage = timeline.add(ev)
        if stage is None:
            return
        if stage.key not in before:
            head = stage.title.split(":")[0] if stage.key.startswith("round-") else stage.title
            self.console.print(f"[bold]{escape(head)}[/]")
        for line in stage.lines[before.get(stage.key, 0) :]:
            style = "yellow" if line.startswith(("Missing", "Verdict: not")) else "dim"
            self.console.print(f"  [{style}]{escape(line)}[/]")

    # -- showing -------------------------------------------------------------------------------

    def show_answer(self, turn: Turn) -> None:
        c = self.console
        ans = turn.answer or {}
        c.print()
        status = turn.totals.get("status") or ans.get("status")
        problem = render.status_line(
            status, {"failure": turn.totals.get("failure"), **ans}, turn.totals.get("errors") or []
        )
        if turn.error:
            c.print(f"[bold red]failed:[/] {escape(turn.error)}")
        elif status == "failed":
            c.print(f"[bold red]{escape(problem or 'No answer')}[/]")
        else:
            if problem:
                c.print(f"[yellow]{escape(problem)}[/]")
            if ans.get("choice"):
                c.print(f"[bold]Answer:[/] {escape(ans['choice'])}")
            c.print(escape(ans.get("text") or "(no answer)"))
            for row in render.table_rows_shown(ans):
                c.print("  " + " | ".join(escape(str(v)) for v in row.values()))
            if ans.get("citations"):
                c.print("\n[bold]Evidence[/]")
            for cit in ans.get("citations") or []:
                meta = render.venue_year(cit)
                c.print(
                    f"[bold cyan][{cit['n']}][/] {escape(cit.get('title') or cit['paper_id'])} "
                    f"[dim]({escape(cit['paper_id'])}{'; ' + escape(meta) if meta else ''})[/] · "
                    f"{cit.get('kind')} · {escape(render.where(cit))}"
                )
                c.print(f'    [dim]"{escape(cit.get("quote") or "")}"[/]')
            if flagged := render.flagged_lines(ans):
                c.print(f"\n[bold yellow]Flagged[/] [dim]({render.FLAGGED_NOTE})[/]")
                for line in flagged:
                    c.print(f"  [dim]{escape(line)}[/]")
            if ans.get("rejected_claims"):
                c.print(
                    f"[dim]{len(ans['rejected_claims'])} claim(s) dropped: not supported by the sentences they "
                    "cite (/dropped shows them)[/]"
                )
        if problem and not turn.error:
            for line in render.error_lines(turn.totals.get("errors") or []):
                c.print(f"  [red]failed call in[/] {escape(line)}")
        c.print(f"[dim]{escape(render.totals_line(turn.totals, turn.trace_id))}[/]")

    def show_history(self) -> None:
        if not self.thread:
            self.console.print("[dim]No conversation yet: ask a question.[/]")
            return
        for turn in self.store.turns(self.thread):
            self.console.print(f"\n[bold cyan]you>[/] {escape(turn.question)}")
            self.show_answer(turn)

    def show_threads(self) -> None:
        threads = self.store.threads()
        if not threads:
            self.console.print("[dim]No conversations yet.[/]")
            return
        for t in threads:
            mark = "*" if t["thread_id"] == self.thread else " "
            when = datetime.fromtimestamp(t["updated"]).strftime("%Y-%m-%d %H:%M") if t["updated"] else "-"
            self.console.print(
                f"{mark} [bold]{t['thread_id']}[/]  {when}  {t['turns']} question(s)  {escape(t['title'])}"
            )
        self.console.print("[dim]/open ID switches (the start of the id is enough)[/]")

    def pick_turn(self, command: str, arg: str, with_answers: bool = True) -> Turn | None:
        """The last turn of this conversation, or its N-th (`arg`); None after saying why not."""
        turns = self.store.turns(self.thread, with_answers=with_answers) if self.thread else []
        if not turns:
            self.console.print("[dim]No answer in this conversation yet.[/]")
            return None
        try:
            return turns[int(arg) - 1] if arg else turns[-1]
        except (ValueError, IndexError):
            self.console.print(f"[red]{command} N takes a question number from 1 to {len(turns)}.[/]")
            return None

    def show_dropped(self, arg: str) -> None:
        """The claims the support check dropped from the last (or N-th) answer, with why."""
        turn = self.pick_turn("/dropped", arg)
        if turn is None:
            return
        lines = render.dropped_lines(turn.answer or {})
        if not lines:
            self.console.print("[dim]No claim was dropped from that answer.[/]")
        for line in lines:
            self.console.print(f"  [yellow]dropped[/] {escape(line)}")

    def show_trace(self, arg: str) -> None:
        from agent.chat.trace_view import print_trace
        from agent.tracing.store import TraceNotFound, load_trace

        turn = self.pick_turn("/trace", arg, with_answers=False)
        if turn is None:
            return
        if not turn.trace_id:
            self.console.print("[dim]That answer has no trace (tracing was off).[/]")
            return
        try:
            print_trace(self.console, load_trace(turn.trace_id))
        except TraceNotFound as exc:
            self.console.print(f"[red]{escape(str(exc))}[/]")

    # -- following citations -------------------------------------------------------------------

    def follow(self, view: Literal["cites", "refs"], arg: str) -> None:
        """/cites or /refs of citation [N] of the last answer, of row #K of the last listing, or
        of a named paper (or, for /cites, a ref: id or title words)."""
        from agent.chat import cites_view

        c = self.console
        if not arg:
            c.print(f"[red]/{view} takes a citation number N, #K (a row of the last listing) or a paper id.[/]")
            return
        try:
            what = self.followed(view, arg)
            idx = cites_view.open_index(self.index, self.corpora, self.preset)
            shown = cites_view.listing(idx, view, what)
        except CannotFollow as exc:
            c.print(f"[red]{escape(str(exc))}[/]")
            return
        self.listings.append(shown)
        self.show_listing(shown)

    def followed(self, view: Literal["cites", "refs"], arg: str) -> str:
        """What `arg` names: row K of the last listing (#K), the paper of citation [N] of the last
        answer (N), else the argument itself."""
        from agent.chat import cites_view

        if arg.startswith("#"):
            if not self.listings:
                raise CannotFollow("no listing yet: /cites or /refs of a citation first")
            rows = self.listings[-1].rows
            k = arg[1:].strip()
            if not k.isdigit() or not 1 <= int(k) <= len(rows):
                span = f"#1 to #{len(rows)}" if rows else "none: it lists no row"
                raise CannotFollow(f"{arg} is not a row of the last listing ({span})")
            return cites_view.follow_target(view, rows[int(k) - 1])
        n = arg.strip("[]")
        if n.isdigit():
            turns = self.store.turns(self.thread) if self.thread else []
            if not turns:
                raise CannotFollow("no answer in this conversation yet: name a paper id or words of a title")
            return cites_view.citation_paper(turns[-1].answer or {}, int(n))
        return arg

    def back(self) -> None:
        if len(self.listings) < 2:
            self.console.print("[dim]No earlier listing.[/]")
            return
        self.listings.pop()
        self.show_listing(self.listings[-1])

    def show_listing(self, shown: Listing) -> None:
        from agent.chat import cites_view

        c = self.console
        (cites_view.print_cites if shown.view == "cites" else cites_view.print_refs)(c, shown.record)
        cites_view.print_notes(c, shown.record["notes"])
        if shown.rows:
            c.print("[dim]/cites #K or /refs #K follows row K; /back returns to the listing before[/]")
