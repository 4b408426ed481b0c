"""`python -m pipeline compare [RUN ...]`: the pipeline runs of an MLflow experiment side by side, one
run per setting (each `dvc repro` or `dvc exp run` of other params): the params that differ, each
run's final figures, and the per-generation curves drawn together, written as a page and printed as a
table."""

from pathlib import Path

from pipeline.commands.cli import command_parser
from pipeline.harness.entry import entry_point
from pipeline.harness.tracking import default_tracking_uri
from pipeline.plumbing.stores import check_store


@entry_point
def main(argv):
    parser = command_parser("compare", __doc__)
    parser.add_argument("runs", nargs="*", help="DVC experiment or MLflow run names; default: every pipeline run")
    parser.add_argument(
        "--tracking-uri", default=None, help="the MLflow store; default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db"
    )
    parser.add_argument("--experiment", default="alphazero", help="the MLflow experiment (tracking.experiment)")
    parser.add_argument("--out", default="comparison", help="folder of compare.html, compare.md and curves.png")
    args = parser.parse_args(argv)
    uri = args.tracking_uri or default_tracking_uri()
    check_store(uri)  # a store that cannot be read is one line before MLflow and the plots are imported
    from pipeline.evaluation.run_comparison import comparison_rows, pipeline_runs, write_comparison

    runs = pipeline_runs(uri, args.experiment, args.runs)
    written = write_comparison(runs, Path(args.out), args.experiment)
    rows = comparison_rows(runs)
    for row in rows:
        print("  ".join(f"{key}={value}" for key, value in row.items() if value != ""))
    print(f"page: {written[0]}")


if __name__ == "__main__":
    main()
