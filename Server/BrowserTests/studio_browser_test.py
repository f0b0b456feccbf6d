#!/usr/bin/env python3
"""End-to-end test of ModelStore Studio in a real browser.

Starts the real `modelstore-studio` on loopback against a real store written by `studio-fixture`
(SQLite in a temporary folder, or the store URL given, such as a PostgreSQL namespace), drives
Debian's chromium through chromium-driver with Selenium, and checks what a
user sees: the entity list, a filter and its explanation, a malformed filter's message, following a
relationship, a change made by another process appearing on the open page (also when it is made
after the page was rendered and before its event stream connected, and when the page is shown again
from the back-forward cache), eight live pages in a row loading (cached pages hold no connection), a
class hierarchy (the diagram's boxes and "is a" arrows, the list of a class with its subclasses, a
model's class), and (in a second studio started with --write) an edit through a model's form recorded
in history. Screenshots go to the artifacts folder; the studios' diagnostic logs of live updates
(MODELSTORE_STUDIO_DEBUG) go there too, and a live check that times out prints them.

usage: studio_browser_test.py BIN_DIR ARTIFACTS_DIR [STORE_URL]
"""

import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import (
    NoSuchElementException, StaleElementReferenceException, TimeoutException, WebDriverException)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)
    print(f"ok: {message}")


def load(driver, address):
    """Opens an address, again (for up to 30 s) while chromium shows its own error page instead: it
    drops a navigation with ERR_NETWORK_CHANGED, and calls itself offline for a while
    (ERR_INTERNET_DISCONNECTED), when the machine's network interfaces change, as they do when other
    jobs create network namespaces."""
    deadline = time.monotonic() + 30
    while True:
        driver.get(address)
        if not driver.find_elements(By.ID, "main-frame-error") or time.monotonic() > deadline:
            return
        print(f"   chromium showed its error page for {address}; opening it again")
        time.sleep(1)


def start_studio(binary, url, log_path, *options):
    """Starts modelstore-studio with its diagnostic log of live updates (MODELSTORE_STUDIO_DEBUG) and
    everything else it writes to standard error in `log_path`, which a failure prints."""
    log = open(log_path, "w")
    process = subprocess.Popen(
        [binary, url, "--port", "0", *options], stdout=subprocess.PIPE, stderr=log, text=True,
        env={**os.environ, "MODELSTORE_STUDIO_DEBUG": "1"})
    log.close()
    line = process.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]+)", line)
    if not match:
        process.kill()
        fail(f"modelstore-studio printed no address: {line!r} {open(log_path).read()!r}")
    return process, match.group(1), match.group(2)


def follow(driver, act):
    """Runs `act` (a click or a form's submission) and waits until the browser has replaced the page and
    loaded the next one: a condition checked on the old page may hold already (the list before a filter
    has an explanation too), and reading the old page's elements while it is replaced fails."""
    old = driver.find_element(By.TAG_NAME, "html")
    act()
    WebDriverWait(driver, 30).until(lambda _: is_replaced(old))
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")


def is_replaced(element):
    """Whether the page that held `element` is gone. Selenium's `staleness_of` knows only the stale-element
    error, but while the old document is torn down Chrome can instead answer that the node "does not belong
    to the document": that means replaced too. Any other error is a real failure and is raised."""
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise


def live_state(driver):
    """What the page's live script saw: the transaction the page was rendered at, its event stream's
    state, and the events it received (by the number of their newest transaction)."""
    try:
        return driver.execute_script(
            "var live = document.getElementById('live');"
            " return live ? {after: live.dataset.after, stream: live.dataset.stream, events: live.dataset.events,"
            " text: live.textContent} : null;")
    except WebDriverException as error:
        return f"unreadable ({type(error).__name__})"


def wait_for_page(driver, condition, what, log_path):
    """Waits up to 20 s for `condition` on a page that reloads itself, printing what the page's live
    script saw while waiting and, on a timeout, the studio's diagnostic log. Reading an element of a page
    being replaced is a reason to look again, not a failure."""
    reloading = [StaleElementReferenceException, NoSuchElementException]
    seen = []

    def watched(d):
        state = live_state(d)
        if not seen or seen[-1][1] != state:
            seen.append((time.monotonic(), state))
            print(f"   page: {state}")
        try:
            return condition(d)
        except WebDriverException as error:
            # An element found on the old page and read while the new one replaces it: Chrome answers
            # that the node "does not belong to the document" (see `is_replaced`). Read it again.
            if "does not belong to the document" in str(error):
                return False
            raise

    try:
        WebDriverWait(driver, 20, poll_frequency=0.05, ignored_exceptions=reloading).until(watched)
    except TimeoutException:
        print(f"   the studio's log ({log_path}):", file=sys.stderr)
        print(open(log_path).read()[-6000:], file=sys.stderr)
        fail(f"timed out waiting for {what}; the page last showed {live_state(driver)}")


def main():
    bin_dir, artifacts = sys.argv[1], sys.argv[2]
    os.makedirs(artifacts, exist_ok=True)
    if len(sys.argv) > 3:
        url = sys.argv[3]
    else:
        folder = tempfile.mkdtemp(prefix="studio-browser-")
        url = f"sqlite:{folder}/demo.sqlite"
    fixture = os.path.join(bin_dir, "studio-fixture")
    subprocess.run([fixture, "demo", url], check=True)
    studio_log = os.path.join(artifacts, "studio.log")
    process, base, token = start_studio(os.path.join(bin_dir, "modelstore-studio"), url, studio_log)
    driver = None
    try:
        try:
            urllib.request.urlopen(base + "/")
            fail("a request without the token was answered")
        except urllib.error.HTTPError as error:
            check(error.code == 401, "a request without the token gets 401")

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1400,1000"]:
            options.add_argument(argument)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        wait = WebDriverWait(driver, 10)

        # The entity list, with counts.
        load(driver, f"{base}/?token={token}")
        wait.until(lambda d: d.find_elements(By.ID, "entities"))
        check(driver.current_url == base + "/", "the token leaves the address after the first visit")
        count = driver.find_element(By.CSS_SELECTOR, "td[data-count='Person']").text
        check(count.startswith("120"), f"Person shows 120 models (shows {count!r})")
        driver.save_screenshot(os.path.join(artifacts, "1-entities.png"))

        # The model list, then a filter, with the explanation beside the results.
        follow(driver, driver.find_element(By.LINK_TEXT, "Person").click)
        wait.until(lambda d: d.find_elements(By.ID, "models"))
        rows = driver.find_elements(By.CSS_SELECTOR, "#models tr td[data-property='name']")
        check(len(rows) == 50, f"the first page shows 50 people (shows {len(rows)})")
        first = {cell.text for cell in rows}
        follow(driver, driver.find_element(By.ID, "next").click)
        wait.until(lambda d: "after=" in d.current_url)
        second = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td[data-property='name']")]
        check(len(second) == 50 and not set(second) & first, "the next page shows 50 other people")
        box = driver.find_element(By.ID, "filter")
        box.clear()
        box.send_keys('age >= 65 && name.contains("a")')
        follow(driver, box.submit)
        wait.until(lambda d: d.find_elements(By.ID, "explain"))
        ages = [int(cell.text) for cell in driver.find_elements(By.CSS_SELECTOR, "td[data-property='age']")]
        names = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td[data-property='name']")]
        check(ages and all(age >= 65 for age in ages), f"the filter keeps ages >= 65 ({len(ages)} people)")
        check(all("a" in name for name in names), "the filter keeps names containing 'a'")
        explain = driver.find_element(By.ID, "explain").text
        check("Person where" in explain and "access path" in explain, "the fetch's explanation is beside the results")
        driver.save_screenshot(os.path.join(artifacts, "2-filter.png"))

        # A malformed filter points at the error.
        box = driver.find_element(By.ID, "filter")
        box.clear()
        box.send_keys("age >= 65 && nmae == 3")
        follow(driver, box.submit)
        error = wait.until(lambda d: d.find_elements(By.ID, "filter-error"))[0].text
        check("'Person' has no property 'nmae'" in error and "^" in error, "a malformed filter gets a pointed message")
        driver.save_screenshot(os.path.join(artifacts, "3-filter-error.png"))

        # A model, and a relationship followed to the related model.
        load(driver, f"{base}/entities/Person?filter=" + urllib.request.quote('name == "Ada Lovelace 0"'))
        # Followed by its address (see load()) rather than by a click, which chromium's error page can eat.
        load(driver, driver.find_element(By.CSS_SELECTOR, "#models tr td a").get_attribute("href"))
        wait.until(lambda d: d.find_elements(By.ID, "attributes"))
        city_link = driver.find_element(By.CSS_SELECTOR, "#rel-city a")
        check(city_link.text.startswith("City"), "the person's city is a link")
        driver.save_screenshot(os.path.join(artifacts, "4-model.png"))
        follow(driver, city_link.click)
        wait.until(lambda d: d.find_element(By.TAG_NAME, "h1").text.startswith("City"))
        city = driver.find_element(By.ID, "value-name").text
        people = driver.find_element(By.ID, "rel-people").text
        check(city == "Rome" and people.startswith("30 models"), f"the related city is Rome with 30 people ({people[:20]!r})")

        # A change made by another process appears on the open page.
        load(driver, f"{base}/entities/Person?filter=" + urllib.request.quote('name == "Ada Lovelace 0"'))
        age_cell = lambda d: d.find_element(By.CSS_SELECTOR, "td[data-property='age']").text
        check(age_cell(driver) == "18", "Ada Lovelace 0 is 18")
        # No wait for the event stream: it starts after the transaction the page was rendered at, so a
        # change made before it connects is sent too.
        started = time.monotonic()
        subprocess.run([fixture, "set-age", url, "Ada Lovelace 0", "99"], check=True)
        wait_for_page(driver, lambda d: age_cell(d) == "99", "the other process's change", studio_log)
        print(f"   the page showed the other process's change {time.monotonic() - started:.2f} s after it started")
        check(True, "a change made by another process appears on the open page")
        driver.save_screenshot(os.path.join(artifacts, "5-live.png"))

        # The same when the change lands between the page's render and its event stream's connection:
        # from a page without a stream (an error page), the browser fetches the page, the other process
        # changes the store, and only then is the fetched page shown and its script subscribes. (Blocking
        # the stream instead would not do: chromium gives up on an event stream whose request is blocked.)
        person_page = f"{base}/entities/Person?filter=" + urllib.request.quote('name == "Ada Lovelace 0"')
        load(driver, f"{base}/entities/Nobody")
        check(not driver.find_elements(By.CSS_SELECTOR, "#live[data-after]"), "an error page does not listen for changes")
        rendered = driver.execute_async_script(
            "fetch(arguments[0]).then(function (r) { return r.text(); }).then(arguments[1]);", person_page)
        check(">99<" in rendered, "the fetched page shows Ada Lovelace 0 at 99")
        subprocess.run([fixture, "set-age", url, "Ada Lovelace 0", "77"], check=True)
        # Shown at the page's own address, which a reload loads.
        driver.execute_script(
            "history.replaceState(null, '', arguments[1]);"
            " document.open(); document.write(arguments[0]); document.close();", rendered, person_page)
        started = time.monotonic()
        wait_for_page(driver, lambda d: age_cell(d) == "77", "the change made before the page subscribed", studio_log)
        print(f"   the page reloaded {time.monotonic() - started:.2f} s after it was shown")
        check(True, "a change made after the page was rendered and before it subscribed reloads it")

        # Pages the browser keeps in its back-forward cache hold no connection: chromium allows six per
        # server, so cached pages holding their event streams would stall the seventh page for about a
        # minute. Eight live pages in a row each load in well under that.
        driver.set_page_load_timeout(20)
        for index in range(8):
            load(driver, f"{base}/entities/Person?n={index}")
            wait.until(lambda d: d.find_element(By.ID, "live").get_attribute("data-stream") == "open")
        driver.set_page_load_timeout(300)
        check(True, "eight live pages in a row load, each with its event stream open")
        # A page shown again from that cache listens again after its own transaction: a change made
        # while it was away reloads it.
        load(driver, person_page)
        check(age_cell(driver) == "77", "Ada Lovelace 0 is 77")
        load(driver, f"{base}/schema")
        subprocess.run([fixture, "set-age", url, "Ada Lovelace 0", "78"], check=True)
        driver.back()
        wait_for_page(driver, lambda d: age_cell(d) == "78", "the change made while the page was away", studio_log)
        # "reload" when chromium restored the page from its cache and the page reloaded itself on the
        # change; "back_forward" when chromium loaded it again instead.
        how = driver.execute_script("return performance.getEntriesByType('navigation')[0].type;")
        print(f"   the page came back by {how!r}")
        check(True, "a page shown again after a change made while it was away shows the change")

        # The schema diagram and the history timeline.
        load(driver, f"{base}/schema")
        check(driver.find_elements(By.ID, "entity-Person"), "the schema diagram draws Person")
        driver.save_screenshot(os.path.join(artifacts, "6-schema.png"))
        load(driver, f"{base}/history")
        timeline = driver.find_element(By.ID, "timeline").text
        check("author fixture" in timeline and "update Person" in timeline, "the history shows the other process's update")
        driver.save_screenshot(os.path.join(artifacts, "7-history.png"))

        # A class hierarchy: a box per class with "is a" arrows, a class's models with its subclasses',
        # and a model's class with the classes it inherits from.
        load(driver, f"{base}/schema")
        check(all(driver.find_elements(By.ID, f"class-{name}") for name in ["Car", "Truck", "TowTruck"])
              and driver.find_elements(By.ID, "entity-Vehicle"), "the schema diagram draws a box per vehicle class")
        arrows = sorted(line.get_attribute("data-from") for line in driver.find_elements(By.CSS_SELECTOR, "line.is-a"))
        check(arrows == ["Car", "TowTruck", "Truck"], f"each subclass has an 'is a' arrow ({arrows})")
        driver.save_screenshot(os.path.join(artifacts, "9-schema-classes.png"))
        load(driver, f"{base}/entities/Vehicle")
        classes = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td[data-property='_modelClass']")]
        check(classes == ["Vehicle", "Car", "Car", "Truck", "TowTruck"], f"the list shows each vehicle's class ({classes})")
        follow(driver, driver.find_element(By.CSS_SELECTOR, "#classes a[data-class='Truck']").click)
        wait.until(lambda d: "class=Truck" in d.current_url)
        plates = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td[data-property='plate']")]
        check(plates == ["T-1", "T-2"], f"the class Truck lists its tow truck too ({plates})")
        check(driver.find_elements(By.CSS_SELECTOR, "td[data-property='payload']")
              and not driver.find_elements(By.CSS_SELECTOR, "td[data-property='seats']"),
              "a class's list shows the columns of that class")
        driver.save_screenshot(os.path.join(artifacts, "10-class-list.png"))
        load(driver, driver.find_elements(By.CSS_SELECTOR, "#models tr td:first-child a")[-1].get_attribute("href"))
        lineage = wait.until(lambda d: d.find_elements(By.ID, "class"))[0].text
        check(lineage == "Class TowTruck · is a Truck · is a Vehicle", f"a model shows its class ({lineage!r})")
        check(driver.find_element(By.ID, "value-hookRating").text == "9"
              and not driver.find_elements(By.ID, "value-seats"), "a model shows the attributes of its class")
        driver.save_screenshot(os.path.join(artifacts, "11-class-model.png"))

        # With --write (a second studio on the same store): an edit through the page's form, recorded
        # in history as author studio with its values before and after.
        writer, write_base, write_token = start_studio(
            os.path.join(bin_dir, "modelstore-studio"), url, os.path.join(artifacts, "studio-write.log"), "--write")
        try:
            load(driver, f"{write_base}/entities/Person?token={write_token}&filter="
                       + urllib.request.quote('name == "Ada Lovelace 0"'))
            follow(driver, driver.find_element(By.CSS_SELECTOR, "#models tr td a").click)
            field = wait.until(lambda d: d.find_elements(By.ID, "edit-age"))[0]
            field.clear()
            field.send_keys("42")
            field.submit()
            # The notice and the field are read together, again while the form's page is replaced by
            # the one its answer redirects to.
            saved = lambda d: ("Saved 'age'" in d.find_element(By.ID, "notice").text
                               and d.find_element(By.ID, "edit-age").get_attribute("value") == "42")
            # Any error of an element read while the page is replaced (stale, missing, or "node does not
            # belong to the document").
            check(WebDriverWait(driver, 10, ignored_exceptions=[WebDriverException]).until(saved),
                  "an edit with --write is saved")
            driver.save_screenshot(os.path.join(artifacts, "8-edit.png"))
            load(driver, f"{write_base}/history")
            newest = driver.find_element(By.CSS_SELECTOR, "#timeline .tx").text
            check("author studio" in newest and "age 78 → 42" in newest, "the edit is in history as author studio")
        finally:
            writer.terminate()
            writer.wait(timeout=10)
    except Exception:
        if driver:
            # What the browser showed when the test failed, for the CI artifacts.
            driver.save_screenshot(os.path.join(artifacts, "failure.png"))
            with open(os.path.join(artifacts, "failure.html"), "w") as page:
                page.write(f"<!-- {driver.current_url} -->\n" + driver.page_source)
        raise
    finally:
        if driver:
            driver.quit()
        process.terminate()
        process.wait(timeout=10)
    print("browser test passed")


if __name__ == "__main__":
    main()
