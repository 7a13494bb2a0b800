"""Dock contents of the main window."""
