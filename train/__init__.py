"""Training recipes (TRL + PEFT) for tutor policies."""
