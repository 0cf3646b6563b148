"""Model code: the DPR bi-encoder (:mod:`models.retriever`), the extractive reader
(:mod:`models.reader`), the suggestion-guided paraphraser (:mod:`models.paraphraser`) and the
small BERT pre-trained by masked-language modelling (:mod:`models.mlm`), each a Lightning
module with its data module; Flair taggers (:mod:`models.flair_taggers`,
trained by :mod:`models.flair_training`)."""
