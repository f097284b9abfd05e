"""Key management for encrypted files: one client interface, a Hadoop/Ranger KMS REST client and a local key store."""

from lineage_platform.security.kms.base import KeyInfo, KeyManagementService, kms_from_url
from lineage_platform.security.kms.hadoop import HadoopKms
from lineage_platform.security.kms.local import LocalKeyStore

__all__ = ["HadoopKms", "KeyInfo", "KeyManagementService", "LocalKeyStore", "kms_from_url"]
