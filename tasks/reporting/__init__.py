"""Tables, figures, reports and Prefect artifacts."""
