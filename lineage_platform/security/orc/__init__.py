"""Reading ORC files that use ORC's column encryption, with keys only for the columns a user may see.

See README.md in this package for the format facts, the module map and the known limits.
"""

from lineage_platform.security.orc.authorise import ReadReport, permitted_columns, read_as_user
from lineage_platform.security.orc.reader import EncryptedOrcReader

__all__ = ["EncryptedOrcReader", "ReadReport", "permitted_columns", "read_as_user"]
