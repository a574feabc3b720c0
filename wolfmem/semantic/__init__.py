"""Optional semantic search: an embeddings client, the vector store, dense ranking, fusion and the background embedder."""
