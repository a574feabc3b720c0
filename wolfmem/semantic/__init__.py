"""Optional semantic search: the vector store, dense ranking, fusion and the background embedder.

The embeddings client is in llm/.
"""
