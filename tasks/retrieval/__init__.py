"""Retrieval: the registry of retrievers (:mod:`tasks.retrieval.retrievers`: BM25 with
Pyserini, dense over FAISS with any encoder, hybrid rank fusion), the core that scores any run
on any query set (:mod:`tasks.retrieval.core`), top-k tables per relation and bucket, and the
comparisons of Table 1 and Figure 1."""
