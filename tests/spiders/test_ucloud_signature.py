"""UCloud request signing (Compshare): worked examples, value encoding, the signed body."""

from __future__ import annotations

from decimal import Decimal

import pytest

from spiders.parsers.envelope import code_envelope, is_code_in
from spiders.parsers.ucloud import (
    AUTH_RETCODES,
    ParamValue,
    encode_value,
    envelope_problem,
    read_envelope,
    signature,
    signed_params,
)

# The example of UCloud's own docs (UCloudDoc-Team/api summary/signature.md): these keys and
# parameters are published there together with the signature they must give.
DOC_PUBLIC_KEY = "ucloudsomeone@example.com1296235120854146120"
DOC_PRIVATE_KEY = "46f09bb9fab4f12dfc160dae12273d5332b5debe"


def test_the_documented_example() -> None:
    params: dict[str, ParamValue] = {
        "Action": "DescribeUHostInstance",
        "Region": "cn-bj2",
        "Limit": 10,
        "PublicKey": DOC_PUBLIC_KEY,
    }
    assert signature(params, DOC_PRIVATE_KEY) == "cba5cf5ec4d4233d206b1b54951e3787350a642f"


def test_a_compshare_price_call_worked_by_hand() -> None:
    # Sorted by name, name and value glued, private key last; SHA1 of that string was
    # computed outside Python: printf '%s' '<string>' | sha1sum.
    # ActionGetCompShareInstancePriceChargeTypeDynamicDisks.0.IsBoottrueDisks.0.Size100
    # Disks.0.TypeCLOUD_SSDGpu1GpuType4090PublicKeypub-exampleRegioncn-wlcbZonecn-wlcb-01
    # priv-example
    params: dict[str, ParamValue] = {
        "Zone": "cn-wlcb-01",
        "Action": "GetCompShareInstancePrice",
        "Region": "cn-wlcb",
        "GpuType": "4090",
        "Gpu": 1,
        "ChargeType": "Dynamic",
        "Disks.0.Type": "CLOUD_SSD",
        "Disks.0.IsBoot": True,
        "Disks.0.Size": 100,
        "PublicKey": "pub-example",
    }
    assert signature(params, "priv-example") == "06ea790d9c9f7f7852047269b61bbb11a7fdb25a"


def test_signature_changes_with_the_private_key() -> None:
    params = {"Action": "DescribeCompShareGpuInventory", "PublicKey": "pub"}
    assert signature(params, "a") != signature(params, "b")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (False, "false"),
        (100, "100"),
        (Decimal("42.0"), "42"),
        (Decimal("4.50"), "4.5"),
        (Decimal("1E+2"), "100"),
        ("CLOUD_SSD", "CLOUD_SSD"),
    ],
)
def test_values_are_written_as_the_api_signs_them(value: object, text: str) -> None:
    assert encode_value(value) == text  # type: ignore[arg-type]


def test_floats_are_refused() -> None:
    with pytest.raises(TypeError):
        encode_value(1.5)  # type: ignore[arg-type]


def test_signed_body_sends_what_it_signed_and_not_the_private_key() -> None:
    body = signed_params(
        {"Action": "GetCompShareInstancePrice", "Gpu": 1, "Disks.0.IsBoot": True},
        public_key="pub-example",
        private_key="priv-example",
    )
    assert body["Gpu"] == "1" and body["Disks.0.IsBoot"] == "true"
    assert body["PublicKey"] == "pub-example"
    unsigned = {k: v for k, v in body.items() if k != "Signature"}
    assert body["Signature"] == signature(unsigned, "priv-example")
    assert "priv-example" not in "".join(body.values())


def test_params_cannot_smuggle_their_own_key() -> None:
    with pytest.raises(ValueError):
        signed_params({"PublicKey": "x"}, public_key="p", private_key="k")


def test_envelope_reads_auth_refusals_and_other_errors() -> None:
    assert read_envelope({"RetCode": 0}).ok
    refused = read_envelope({"RetCode": 171, "Message": "Signature VerifyAC Error"})
    assert refused.auth_rejected and not refused.ok
    assert read_envelope({"RetCode": 172, "Message": "User Not Exists"}).auth_rejected
    other = read_envelope({"RetCode": 230, "Message": "Params [Region] not available"})
    assert not other.auth_rejected and other.error == "RetCode 230: Params [Region] not available"
    assert read_envelope({"data": []}).not_an_envelope


@pytest.mark.parametrize("code", [[], {}, [171], "0", "171", True, None, Decimal("0.5")])
def test_a_retcode_that_is_not_a_number_is_no_envelope(code: object) -> None:
    # An unhashable RetCode tested against the set of refusal codes must not raise.
    envelope = read_envelope({"RetCode": code, "Message": {"x": 1}})
    assert envelope.not_an_envelope and not envelope.ok and not envelope.auth_rejected
    assert envelope.error is not None and envelope.error.startswith("RetCode is not a number")


def test_envelope_problem_names_the_layout_or_the_error() -> None:
    assert envelope_problem({"RetCode": 0}) is None
    layout = envelope_problem({"RetCode": []})
    assert layout is not None and layout.layout_error is not None and not layout.auth_rejected
    refused = envelope_problem({"RetCode": 171, "Message": "Signature VerifyAC Error"})
    assert refused is not None and refused.auth_rejected and refused.layout_error is None
    failed = envelope_problem({"RetCode": 230, "Message": ["not", "text"]})
    assert failed is not None and failed.api_error == "RetCode 230: ['not', 'text']"


@pytest.mark.parametrize("code", [[], {}, {"a": 1}, [1, 2], ("AuthorizeFailed", [])])
def test_a_code_no_set_can_hold_is_never_in_the_auth_codes(code: object) -> None:
    assert not is_code_in(code, frozenset({"AuthorizeFailed", 171}))
    problem = code_envelope(
        {"code": code, "msg": ""}, code_key="code", ok=0, message_key="msg",
        auth_codes=frozenset({"AuthorizeFailed"}),
    )  # fmt: skip
    assert problem is not None and problem.layout_error is not None


def test_a_bool_is_not_the_numeric_code() -> None:
    assert not is_code_in(True, {1}) and is_code_in(171, AUTH_RETCODES)
    problem = code_envelope({"status": True, "message": "x"}, code_key="status", ok=1,
                            message_key="message")  # fmt: skip
    assert problem is not None and problem.layout_error is not None
