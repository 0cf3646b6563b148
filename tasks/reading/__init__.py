"""Extractive readers on SQuAD: training and prediction steps (:mod:`tasks.reading.stages`),
scoring of any model's predictions (:mod:`tasks.reading.scoring`) and EM/F1 on original vs
paraphrased questions (:mod:`tasks.reading.robustness`)."""
