"""Importers that turn other benchmarks' tasks into rcb tasks."""

from rcb_action.importers.researchcodebench import Imported, import_researchcodebench

__all__ = ["Imported", "import_researchcodebench"]
