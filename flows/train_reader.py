"""Flow: train the extractive reader (Gan & Ng, 2019) on the SQuAD v1.1 training questions.

``readers.model`` (any BERT-family checkpoint, ``AutoModelForQuestionAnswering``) is fine-tuned
with Lightning on ``sources.squad_train`` -> ``data/readers/<model>/`` (Hugging Face
checkpoint). It is a stage of its own, apart from the readers stage that asks it the
paraphrased questions: it needs only the SQuAD training file, so it runs beside the
paraphrase stage rather than after it, and a change to the paraphrase settings does not train
it again under ``dvc repro``. The readers, retrieve-then-read and reader-augmentation stages
read the checkpoint ("the reader trained on the original questions").
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import raw_input, resolve
from tasks.config import Params
from tasks.io.errors import MissingInputError
from tasks.layout import Layout
from tasks.model_names import model_slug
from tasks.reading.stages import train_reader_task
from tasks.reading.trained_as import require_trained_as


def trained_reader(params: Params) -> Path:
    """The train-reader stage's checkpoint of ``readers.model``; a clear error when it is
    absent or was trained with other ``readers.model`` settings."""
    model_dir = Layout(params).reader_dir(model_slug(params.readers.model.model))
    if not (model_dir / "config.json").is_file():
        raise MissingInputError(f"no trained reader at {model_dir} (config.json missing): run "
                                "the train-reader stage first (qastress stage train-reader)")
    return require_trained_as(model_dir, params.readers.model, "qastress stage train-reader")


@flow(name="train-reader", log_prints=True)
def train_reader(params: Params | None = None, profile: str | None = None,
                 params_file: str | None = None) -> dict:
    """Fine-tune ``readers.model`` on the SQuAD training file; return what was trained."""
    params = resolve(params, profile, params_file)
    cfg = params.readers.model
    layout = Layout(params)
    out_dir = layout.reader_dir(model_slug(cfg.model))
    trained = train_reader_task(raw_input(params, "squad_train"), out_dir, cfg,
                                checkpoint_dir=str(layout.reader_checkpoints(out_dir)))
    print(f"reader {cfg.model} trained on {trained['questions']} questions -> {out_dir}")
    return trained


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("train-reader")
