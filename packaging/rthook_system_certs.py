"""PyInstaller runtime hook (Linux bundle): HTTPS trusts the system's CA certificates.

httpx verifies servers against certifi's bundle unless SSL_CERT_FILE or SSL_CERT_DIR is
set; the .deb's app should trust what the system trusts (its ca-certificates updates, a
company CA an administrator added). Set only when the person has not set either.
"""

import os
import sys

SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # Debian, Ubuntu (ca-certificates)

if (
    sys.platform.startswith("linux")
    and "SSL_CERT_FILE" not in os.environ
    and "SSL_CERT_DIR" not in os.environ
    and os.path.isfile(SYSTEM_BUNDLE)
):
    os.environ["SSL_CERT_FILE"] = SYSTEM_BUNDLE
