"""The only package that imports `openai`: the chat client for curation and the audit, the embeddings client, and
the transport that holds every request to a total deadline."""
