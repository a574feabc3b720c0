"""Optional semantic search: the vector store, dense ranking, fusion and the background embedder (the client is in llm/)."""
