"""Policies that act in the tutoring env: simulated and LLM students, tutor policies, model backends."""
