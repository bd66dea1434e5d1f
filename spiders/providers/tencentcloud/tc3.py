"""TC3-HMAC-SHA256, the request signature of Tencent Cloud API 3.0 ("签名方法 v3"), written
from its documented steps (the "Signature v3" page of every product's API 3.0 docs, e.g.
tencentcloud.com/document/api/1227/61798; Tencent's own demo of the same steps and of its
worked example: TencentCloud/signature-process-demo, cvm/signature-v3/):

1. the canonical request: ``POST``, the URI ``/`` (a constant), an empty query, the signed
   headers ``content-type`` and ``host`` (lower-case ``name:value`` lines), their names
   ``content-type;host`` and the lower-case hex SHA-256 of the body;
2. the string to sign: ``TC3-HMAC-SHA256``, the Unix timestamp, the credential scope
   ``<UTC date>/<service>/tc3_request`` and the hex SHA-256 of the canonical request;
3. the signing key: HMAC-SHA256 chained from ``"TC3" + SecretKey`` over the UTC date, the
   service and ``tc3_request``; the signature is the hex HMAC of the string to sign;
4. ``Authorization: TC3-HMAC-SHA256 Credential=<SecretId>/<scope>, SignedHeaders=...,
   Signature=...``, sent with ``X-TC-Action``, ``X-TC-Timestamp``, ``X-TC-Version`` and
   ``X-TC-Region``.

The body that is sent must be the very bytes that were hashed, so callers sign the encoded
body they send. The secret key only ever enters `signing_key`: never a header, a log or a
body.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime

ALGORITHM = "TC3-HMAC-SHA256"
CONTENT_TYPE = "application/json; charset=utf-8"
SIGNED_HEADERS = "content-type;host"
CANONICAL_URI = "/"
"""The documented constant: API 3.0 has one endpoint per service, the action is a header."""
SCOPE_TERMINATOR = "tc3_request"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def utc_date(timestamp: int) -> str:
    """The credential scope's date: the UTC day of the timestamp (``2019-02-25``)."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")


def canonical_request(payload: bytes, host: str, content_type: str = CONTENT_TYPE) -> str:
    canonical_headers = f"content-type:{content_type}\nhost:{host}\n"
    return "\n".join(
        ("POST", CANONICAL_URI, "", canonical_headers, SIGNED_HEADERS, sha256_hex(payload))
    )


def credential_scope(timestamp: int, service: str) -> str:
    return f"{utc_date(timestamp)}/{service}/{SCOPE_TERMINATOR}"


def string_to_sign(canonical: str, timestamp: int, service: str) -> str:
    return "\n".join(
        (
            ALGORITHM,
            str(timestamp),
            credential_scope(timestamp, service),
            sha256_hex(canonical.encode("utf-8")),
        )
    )


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def signing_key(secret_key: str, date: str, service: str) -> bytes:
    secret_date = _hmac(f"TC3{secret_key}".encode(), date)
    return _hmac(_hmac(secret_date, service), SCOPE_TERMINATOR)


def signature(secret_key: str, to_sign: str, timestamp: int, service: str) -> str:
    key = signing_key(secret_key, utc_date(timestamp), service)
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def authorization(
    *,
    secret_id: str,
    secret_key: str,
    service: str,
    host: str,
    payload: bytes,
    timestamp: int,
) -> str:
    """The ``Authorization`` header of a POST of `payload` to `host` at `timestamp`."""
    to_sign = string_to_sign(canonical_request(payload, host), timestamp, service)
    return (
        f"{ALGORITHM} Credential={secret_id}/{credential_scope(timestamp, service)}, "
        f"SignedHeaders={SIGNED_HEADERS}, "
        f"Signature={signature(secret_key, to_sign, timestamp, service)}"
    )


def signed_headers(
    *,
    secret_id: str,
    secret_key: str,
    service: str,
    host: str,
    action: str,
    version: str,
    region: str,
    payload: bytes,
    timestamp: int,
) -> dict[str, str]:
    """Every header a signed API 3.0 call sends (the transport adds ``Host`` itself, from the
    URL whose host was signed)."""
    return {
        "Authorization": authorization(
            secret_id=secret_id,
            secret_key=secret_key,
            service=service,
            host=host,
            payload=payload,
            timestamp=timestamp,
        ),
        "Content-Type": CONTENT_TYPE,
        "X-TC-Action": action,
        "X-TC-Timestamp": str(timestamp),
        "X-TC-Version": version,
        "X-TC-Region": region,
    }
