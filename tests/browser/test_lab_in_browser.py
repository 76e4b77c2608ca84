"""The lab in a real browser: health with no key, a message answered in every column, a
column's expander, every page, deleting a memory; screenshots in artifacts/screenshots/."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from playwright.sync_api import Page, expect

from backends.registry import backend_names

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)
REPLY = "Model: offline model (rule-based)"  # the label under each reply (the reply text has no prefix)


def test_run_command_answers_health_without_an_api_key(lab_url):
    response = httpx.get(f"{lab_url}/_stcore/health", timeout=10)
    assert response.status_code == 200
    assert response.text == "ok"


def create_user(tab: Page, name: str) -> None:
    sidebar = tab.get_by_test_id("stSidebar")
    sidebar.get_by_label("New user").fill(name)
    sidebar.get_by_label("New user").press("Enter")
    sidebar.get_by_role("button", name="Create user").click()
    expect(sidebar.get_by_role("combobox", name="User")).to_have_value(name)


def settle(tab: Page) -> None:
    """Wait until the script run an action triggered has finished (Streamlit marks stApp)."""
    tab.wait_for_timeout(400)
    tab.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", state="attached")
    tab.wait_for_timeout(400)  # let expanders and charts finish drawing before a screenshot


def send(tab: Page, text: str) -> None:
    box = tab.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")


def test_chat_expander_pages_and_delete(lab_url, page: Page, shoot):
    names = backend_names()
    page.goto(lab_url)
    expect(page.get_by_role("heading", name="Memory Lab", exact=True, level=1)).to_be_visible()
    user = f"browser-{uuid.uuid4().hex[:6]}"
    create_user(page, user)

    send(page, "I am vegetarian and I live in Lisbon.")
    replies = page.get_by_test_id("stChatMessage").filter(has_text=REPLY)
    expect(replies).to_have_count(len(names))
    settle(page)
    shoot(page, "01-main-after-first-message")
    expect(page.get_by_test_id("stPlotlyChart")).to_be_visible()

    send(page, "What should I cook for dinner?")
    expect(replies).to_have_count(2 * len(names))
    expanders = page.get_by_test_id("stExpander").filter(has_text=re.compile(r"What .* did"))
    expect(expanders).to_have_count(2 * len(names))
    last_custom = page.get_by_test_id("stExpander").filter(has_text="What Custom pipeline did").last
    last_custom.locator("summary").click()
    expect(last_custom).to_contain_text("input tokens")
    expect(last_custom).to_contain_text("similarity")
    settle(page)
    shoot(page, "02-main-expander-open")

    nav = page.get_by_test_id("stSidebarNav")
    nav.get_by_role("link", name="Memories").click()
    expect(page.get_by_role("heading", name="Memories", exact=True, level=1)).to_be_visible()
    custom_tab = page.get_by_role("tab", name="Custom pipeline")
    custom_tab.click()
    panel = page.get_by_role("tabpanel").filter(has_text="live memories").filter(visible=True)
    expect(panel).to_contain_text("User is vegetarian")
    settle(page)
    shoot(page, "03-memories")
    card = panel.locator("[class*='st-key-memory-custom-']").filter(has_text="User is vegetarian")
    card.get_by_role("button", name="Delete").click()
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text("Deleted from Custom pipeline")
    settle(page)
    page.get_by_role("tab", name="Custom pipeline").click()
    visible_panel = page.get_by_role("tabpanel").filter(visible=True)
    expect(visible_panel).to_contain_text("User lives in Lisbon")
    expect(visible_panel).not_to_contain_text("User is vegetarian")
    shoot(page, "04-memories-after-delete")
    for tab_name, shot in (("Mem0", "04b-memories-mem0"), ("Memory-tool agent", "04c-memories-memory-tool")):
        page.get_by_role("tab", name=tab_name).click()
        expect(page.get_by_role("tabpanel").filter(visible=True)).to_contain_text("vegetarian")
        shoot(page, shot)

    nav.get_by_role("link", name="Memory files").click()
    expect(page.get_by_role("heading", name="Memory files", exact=True, level=1)).to_be_visible()
    expect(page.get_by_test_id("stCode").first).to_contain_text(".md")
    settle(page)
    shoot(page, "05-memory-files")

    nav.get_by_role("link", name="Jobs").click()
    expect(page.get_by_role("heading", name="Jobs", exact=True, level=1)).to_be_visible()
    expect(page.get_by_test_id("stMetric").filter(has_text="done")).to_have_count(1)
    expect(page.get_by_test_id("stTable").last).to_contain_text("custom.extract")
    settle(page)
    shoot(page, "06-jobs")

    nav.get_by_role("link", name="Evals").click()
    expect(page.get_by_role("heading", name="Evals", exact=True, level=1)).to_be_visible()
    cases = page.get_by_test_id("stMultiSelect").filter(has_text="Case files")
    cases.get_by_role("button", name="Clear all").click()
    cases.click()
    page.get_by_role("option", name="over_retrieval").click()
    page.keyboard.press("Escape")
    backends = page.get_by_test_id("stMultiSelect").filter(has_text="Backends")
    backends.get_by_role("button", name="Clear all").click()
    backends.click()
    page.get_by_role("option", name="No memory (baseline)").click()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Run the eval suite").click()
    expect(page.get_by_test_id("stPlotlyChart")).to_be_visible(timeout=120_000)
    settle(page)
    shoot(page, "07-evals")
    expect(page.get_by_test_id("stException")).to_have_count(0)
