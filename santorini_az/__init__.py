"""Learn AlphaZero by building it for the board game Santorini: a notebook-first course and a fast, tested package."""

__version__ = "0.1.0"
