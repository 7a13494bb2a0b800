"""The main window and what it is made of: the action table its menus, command palette
and shortcut list come from, file handling, exports, the registry of open windows, the
compare window and the help dialogs."""
