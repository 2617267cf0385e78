"""``python -m cursus.cli``: the ``cursus`` command."""

from __future__ import annotations

from . import main

raise SystemExit(main())
