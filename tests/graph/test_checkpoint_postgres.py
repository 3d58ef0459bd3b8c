"""Chat threads checkpointed in a real, throwaway Postgres (LITLOOP_CHECKPOINT__URL), scripted model."""

from __future__ import annotations

import pytest

from .conftest import SATISFIED, cite_first_chunk, claims_answer

pytestmark = [pytest.mark.graph, pytest.mark.postgres]

ANSWER = claims_answer(("CRFs reach 95.7 F1 on chunking.", "95.7"))


@pytest.fixture
def pg_env(scripted, monkeypatch, tmp_path, postgres_url):
    monkeypatch.setenv("LITLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LITLOOP_CHECKPOINT__URL", postgres_url)
    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    from agent.settings import default_settings

    default_settings.cache_clear()
    yield scripted
    default_settings.cache_clear()


def test_chat_turns_are_checkpointed_in_postgres_and_survive_reopening(pg_env, postgres_url):
    pg_env(
        decompose=({"subqueries": ["crf chunking F1"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
    )
    import psycopg

    from agent.chat.session import ChatStore, ask_turn

    store = ChatStore()
    try:
        assert store.checkpointer.__class__.__name__ == "PostgresSaver"
        thread = store.new_thread()
        turn = ask_turn(store, thread, "What F1 do CRFs reach on chunking?", preset="paper", read_papers=2)
    finally:
        store.close()
    # the checkpoint is a row in Postgres, not in the SQLite file
    with psycopg.connect(postgres_url) as conn:
        n = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (turn.graph_thread,)).fetchone()
    assert n is not None and n[0] == 1
    # a new store (another process, after a restart) reads the answer back from Postgres
    again = ChatStore()
    try:
        [back] = again.turns(thread)
        assert "95.7 F1" in back.answer["text"]
        assert back.answer["citations"]
    finally:
        again.close()


def test_an_unreachable_postgres_is_an_error_naming_the_setting(monkeypatch, tmp_path):
    import socket

    from agent.serve.checkpoint import CheckpointProblem, open_checkpointer
    from agent.settings import Settings

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings(
        data_dir=tmp_path,
        checkpoint={"url": f"postgresql://u:secret@127.0.0.1:{port}/db", "connect_timeout_s": 2},
    )
    with pytest.raises(CheckpointProblem) as err:
        open_checkpointer(settings)
    msg = str(err.value)
    assert "LITLOOP_CHECKPOINT__URL" in msg and "secret" not in msg and "***" in msg
    with pytest.raises(CheckpointProblem, match="not a Postgres URL"):
        open_checkpointer(Settings(data_dir=tmp_path, checkpoint={"url": "mysql://x/y"}))
