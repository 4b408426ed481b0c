"""Every form of a password the database drivers accept is masked in what the project prints or logs."""

import pytest

from pipeline.credentials import mask_passwords


@pytest.mark.parametrize(
    "text",
    [
        "postgresql+psycopg://ada:S3cret@127.0.0.1:5432/optuna",
        "postgresql://ada:S3c/ret@db/optuna",  # a raw '/'
        "error: MLflow store postgresql://ada:S3c ret@db/mlflow: refuses the login",  # a space
        "postgresql://ada:S3c@ret@db/optuna",  # a raw '@'
        "mysql+pymysql://ada:S3c%2Fret@db/optuna",  # percent-encoded
        "postgresql://ada@db/optuna?sslmode=require&password=S3cret",  # libpq's query parameter
        "postgresql:///optuna?host=/run/postgresql&password=S3cret",
        "host=db user=ada password=S3cret dbname=optuna",  # a key-value DSN
        "host=db user=ada password = 'S3c ret' dbname=optuna",
        "http://ada:S3cret@127.0.0.1:5000",
        "https://ada:S3cret@mlflow.example.org/",
    ],
)
def test_a_password_in_any_form_the_drivers_read_is_masked(text):
    masked = mask_passwords(text)
    assert "S3c" not in masked and "ret@" not in masked and "***" in masked


@pytest.mark.parametrize("text", ["postgresql://ada@db/optuna", "http://127.0.0.1:5000/api", "sqlite:///mlflow.db"])
def test_text_without_a_password_is_left_as_it_is(text):
    assert mask_passwords(text) == text
