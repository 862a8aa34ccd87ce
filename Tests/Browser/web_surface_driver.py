#!/usr/bin/python3
"""Drives SoundFit's web surface (/ui) in headless Chromium for the integration suite
(WebSurfaceTests). Reads one JSON command per line on stdin, answers each with one line
`reply <sequence> <json>` on stdout: {"ok": true, "result": …} or {"ok": false, "error": …}.

Everything is read from what the page shows or keeps on its elements (control values, the
plotted data on the charts, the meter readings), never from SoundFit directly: the Swift test
checks SoundFit over UDP and through JACK itself.
"""
import json
import math
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

browser = None


def wait_for(description, timeout, probe):
    """Polls `probe` every 50 ms until it returns something truthy; raises after `timeout` s."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout} s waiting for {description} (last: {last!r})")


def script(source, *args):
    return browser.execute_script(source, *args)


def row(path):
    return browser.find_element(By.CSS_SELECTOR, f'.parameter[data-path="{path}"]')


def control(path):
    return script("""
        const row = document.querySelector(`.parameter[data-path="${arguments[0]}"]`);
        if (!row) return null;
        const input = row.querySelector('[data-path]');
        return {path: arguments[0], tag: input.tagName.toLowerCase(), type: input.type || input.className,
                value: input.dataset.value, position: input.type === 'range' ? Number(input.value) : null,
                state: row.dataset.state || '', stateText: row.querySelector('.update-state').textContent,
                label: row.querySelector('label').textContent};""", path)


def open_page(url, width=1280, height=800):
    global browser
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}"]:
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    browser.set_window_size(width, height)
    browser.get(url)
    wait_for("the page built from the namespace", 20,
             lambda: script("return document.body.dataset.ready === 'true' && document.querySelectorAll('.parameter').length"))
    return {"title": browser.title}


def controls():
    paths = script("return [...document.querySelectorAll('.parameter')].map(r => r.dataset.path)")
    return [control(path) for path in paths]


def wait_value(path, value, tolerance=0.0, timeout=10):
    def matches():
        shown = control(path)
        if shown is None or shown["value"] is None:
            return None
        try:
            close = abs(float(shown["value"]) - float(value)) <= tolerance
        except ValueError:
            close = shown["value"] == str(value)
        return shown if close else None
    return wait_for(f"{path} to show {value}", timeout, matches)


def click_slider(path, fraction, timeout=15):
    """Clicks the slider's track at `fraction` of its width, as a person would, then waits for
    the change's terminal update state."""
    slider = row(path).find_element(By.CSS_SELECTOR, "input[type=range]")
    width = slider.size["width"]
    offset = int((fraction - 0.5) * width)
    before = control(path)["value"]
    ActionChains(browser).move_to_element_with_offset(slider, offset, 0).click().perform()
    wait_for(f"{path} to change from {before}", timeout, lambda: control(path)["value"] != before)
    return wait_for(f"{path}'s change to end", timeout,
                    lambda: (lambda c: c if c["state"] in ("applied", "failed", "superseded") else None)(control(path)))


def toggle(path, timeout=15):
    row(path).find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
    return wait_for(f"{path}'s change to end", timeout,
                    lambda: (lambda c: c if c["state"] in ("applied", "failed") else None)(control(path)))


def response(after=0, timeout=15):
    """The data the response chart plotted from a request the page made after `after` (ms
    since the epoch, the page's clock)."""
    return wait_for("the response chart", timeout, lambda: script("""
        const chart = document.getElementById('response-chart');
        return chart.plotData && Number(chart.dataset.requested) > arguments[0] ? chart.plotData : null;""", after))


def now():
    return script("return Date.now()")


def fill_audiogram(right, left, timeout=45):
    """Types the thresholds into the audiogram form, submits it, and returns what the chart
    then plots (and how many O and X marks it drew). SoundFit generates the presets before it
    answers; on a machine busy with builds that took longer than 15 s once, hence the timeout."""
    script("document.querySelector('#audiogram-form').closest('details').open = true")
    for ear, points in (("right", right), ("left", left)):
        for hz, db in points:
            field = browser.find_element(By.CSS_SELECTOR, f'#audiogram-rows input[data-ear="{ear}"][data-hz="{int(hz)}"]')
            field.clear()
            field.send_keys(str(db))
    browser.find_element(By.ID, "audiogram-submit").click()
    expected = {"right": sorted([list(map(float, p)) for p in right]), "left": sorted([list(map(float, p)) for p in left])}

    def drawn():
        data = script("return document.getElementById('audiogram-chart').plotData")
        plotted = {ear: [list(map(float, p)) for p in data[ear]] for ear in ("right", "left")}
        return data if all(point in plotted[ear] for ear in expected for point in expected[ear]) else None
    try:
        data = wait_for("the audiogram chart to show the submitted profile", timeout, drawn)
    except RuntimeError as error:
        shown = script("return [document.getElementById('audiogram-chart').plotData, "
                       "document.getElementById('profile-state').textContent]")
        raise RuntimeError(f"{error}; the chart plots {shown[0]!r}, the profile line says {shown[1]!r}") from None
    marks = script("""
        const chart = document.getElementById('audiogram-chart');
        return {o: chart.querySelectorAll('circle.ear-right').length, x: chart.querySelectorAll('path.ear-left').length,
                rightLine: chart.querySelector('polyline.ear-right').getAttribute('points'),
                leftLine: chart.querySelector('polyline.ear-left').getAttribute('points')};""")
    return {"plotted": data, "marks": marks}


def meters():
    return script("return document.getElementById('meters').meterData")


def wait_meter(side, low, high, timeout=10):
    """Waits until the peak of every channel of the `input` or `output` meter reads within
    low…high dBFS; returns the page's readings of that side (peak and RMS per channel)."""
    def within():
        reading = (meters() or {}).get(side) or {}
        peaks = reading.get("peak") or []
        return reading if peaks and all(v is not None and low <= v <= high for v in peaks) else None
    return wait_for(f"the {side} meter within {low}…{high} dBFS", timeout, within)


def click(selector):
    browser.find_element(By.CSS_SELECTOR, selector).click()
    return True


def test_state(state, timeout=15):
    return wait_for(f"the hearing test to be {state}", timeout,
                    lambda: script("return document.getElementById('test-panel').dataset.state === arguments[0] && "
                                   "document.getElementById('test-state').textContent", state))


def press_heard(seconds, interval=0.1):
    """Answers the running test for `seconds`: the big button and the space bar in turn."""
    button = browser.find_element(By.ID, "heard")
    presses = 0
    end = time.time() + seconds
    while time.time() < end:
        if presses % 2 == 0:
            button.click()
        else:
            ActionChains(browser).send_keys(Keys.SPACE).perform()
        presses += 1
        time.sleep(interval)
    return presses


def wait_patch(name, present=True, timeout=10):
    """Waits until the page's patch list shows (or, `present` false, no longer shows) a patch
    named `name`; returns the list's entries."""
    def listed():
        entries = script("return [...document.querySelectorAll('#patch-list option')].map(o => o.textContent)")
        shown = any(entry.endswith(f": {name}") for entry in entries)
        return entries if shown == present else None
    return wait_for(f"patch {name!r} {'in' if present else 'gone from'} the page's list", timeout, listed)


def errors():
    return script("return [...document.querySelectorAll('#errors li')].map(li => li.textContent)")


def wait_dataset(key, timeout=15):
    """Waits until the page's `document.body.dataset[key]` is set (a page under test writes its
    outcome there, e.g. the hostile page of WebAccessTests) and returns it."""
    return wait_for(f"document.body.dataset.{key}", timeout, lambda: script("return document.body.dataset[arguments[0]]", key))


def screenshot(path, width=None, height=None, full=False):
    """Saves a PNG of the page from its top; `full`: the window grows to the whole page."""
    if width:
        browser.set_window_size(width, height)
    if full:
        browser.set_window_size(browser.get_window_size()["width"], script("return document.documentElement.scrollHeight") + 120)
    script("window.scrollTo(0, 0)")
    time.sleep(0.5)
    browser.save_screenshot(path)
    return path


def wait_persistence(persisted, timeout=15):
    """Waits until the page shows SoundFit's `/status persisted` as `persisted`: the
    "not persisted" banner up (False) or hidden (True); returns the banner's state."""
    def probe():
        shown = script("const banner = document.getElementById('persistence');"
                       "return {hidden: banner.hidden, text: banner.textContent, persisted: banner.dataset.persisted || ''};")
        return shown if shown["hidden"] == persisted and shown["persisted"] == ("1" if persisted else "0") else None
    return wait_for(f"the page to show persisted {int(persisted)}", timeout, probe)


def set_field(selector, value):
    """Sets an input's or select's value as a person would (clear and type, or choose)."""
    element = browser.find_element(By.CSS_SELECTOR, selector)
    if element.tag_name == "select":
        script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'))", element, str(value))
    else:
        element.clear()
        element.send_keys(str(value))
    return True


def wait_text(selector, contains, timeout=15):
    """Waits until the element's text contains `contains`; returns the text."""
    return wait_for(f"{selector} to show {contains!r}", timeout,
                    lambda: (lambda text: text if contains in text else None)(
                        script("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", selector)))


def evaluate(source):
    """Runs `source` (a function body) in the page and returns its result: what a chart drew."""
    return script(source)


def wait_until(source, timeout=15):
    """Waits until `source` (a function body) returns something truthy in the page; returns it.
    For what the page does on its own schedule: wait on what it shows, not for a time."""
    return wait_for(f"the page to satisfy {source!r}", timeout, lambda: script(source))


COMMANDS = {name: globals()[name] for name in [
    "set_field", "wait_text", "evaluate", "wait_until",
    "open_page", "controls", "control", "wait_value", "click_slider", "toggle", "response", "now", "fill_audiogram",
    "meters", "wait_meter", "click", "test_state", "press_heard", "wait_patch", "errors", "screenshot",
    "wait_dataset", "wait_persistence"]}


def main():
    for sequence, line in enumerate(sys.stdin):
        try:
            command = json.loads(line)
            name = command.pop("command")
            if name == "quit":
                break
            answer = {"ok": True, "result": COMMANDS[name](**command)}
        except Exception as error:  # every failure goes back to the test as text
            answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(f"reply {sequence} {json.dumps(answer)}\n")
        sys.stdout.flush()
    if browser:
        browser.quit()


if __name__ == "__main__":
    main()
