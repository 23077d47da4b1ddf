"""Evaluation: rollouts, metrics, leaderboards, reports and the ``tutorzoo`` CLI."""
