"""One module per ``rcb`` sub-command; see :mod:`rcb_action.cli`."""
