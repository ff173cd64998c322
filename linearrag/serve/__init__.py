"""``linearrag serve``: one long-running process that shares a warm index with a team — a
versioned JSON API, the MCP tools over streamable HTTP, a search page, and a folder kept in
sync (docs/serving.md)."""
