"""Settings errors are one line that says what to change; secrets are never shown."""

from __future__ import annotations

import pytest

from settings import SettingsError, load_settings


def test_unknown_provider_is_one_clear_line():
    with pytest.raises(SettingsError) as raised:
        load_settings(llm_provider="bard")
    message = str(raised.value)
    assert "\n" not in message
    assert "LLM_PROVIDER" in message and "'bard'" in message


def test_missing_key_for_chosen_provider():
    with pytest.raises(SettingsError, match="LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY"):
        load_settings(llm_provider="anthropic", anthropic_api_key=None)


def test_default_is_offline_without_key_and_anthropic_with_one():
    assert load_settings(llm_provider=None, anthropic_api_key=None).resolved_provider == "offline"
    with_key = load_settings(llm_provider=None, anthropic_api_key="sk-ant-secret-value")
    assert with_key.resolved_provider == "anthropic"
    shown = str(with_key.public_summary()) + repr(with_key)
    assert "sk-ant-secret-value" not in shown


def test_out_of_range_knob_names_the_setting():
    with pytest.raises(SettingsError) as raised:
        load_settings(half_life_days=-3)
    assert "HALF_LIFE_DAYS" in str(raised.value)
