"""`nablog serve`: the HTTP/SSE application over a Database (needs the ``server`` extra: starlette, uvicorn)."""
