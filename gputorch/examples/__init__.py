"""Runnable examples. ``python -m gputorch quickstart`` runs :mod:`gputorch.examples.quickstart`.

Examples are not imported by ``import gputorch``; import them explicitly.
"""
