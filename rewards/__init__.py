"""Reward terms and their weighted composition (TRL-compatible reward functions)."""
