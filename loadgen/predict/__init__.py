"""Predicting a server from measurements: a fitted step-time model (`step_model`), fitted from runs
(`calibrate`), driving the reference engine's own scheduler in virtual time (`virtual`, `predict`)."""
