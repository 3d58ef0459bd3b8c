"""The chats over the agent: the web chat (`app.py`, Streamlit), the terminal chat
(`terminal.py`), and what both share (`session.py`: threads, follow-ups, one turn; `render.py`:
step, citation and totals text). SEE: docs/chat.md."""
