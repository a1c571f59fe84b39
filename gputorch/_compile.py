"""gputorch.compile (being written)."""

def compile(model=None, **options):
    return model
