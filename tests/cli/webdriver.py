"""A small W3C WebDriver client (python3 standard library only) for headless Chromium.

It starts /usr/bin/chromedriver on a free loopback port, opens one browser session with a
private profile, and offers what the web page's test needs: load a URL, find elements, read
their text and attributes, click, accept a confirm() dialog, run a script, take a screenshot.
Every wait is bounded (Browser.wait_for), and close() ends the session and the driver.

    with Browser(tmpdir) as b:
        b.get(url)
        row = b.wait_for(lambda: b.find('tr[data-job="1"]'), 60, 'job 1 listed')
"""
import base64
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'  # the W3C element reference key
CHROMEDRIVER = os.environ.get('HRM_CHROMEDRIVER', '/usr/bin/chromedriver')
CHROMIUM = os.environ.get('HRM_CHROMIUM', '/usr/bin/chromium')


class WebDriverError(Exception):
    def __init__(self, error, message):
        super().__init__(f'{error}: {message}')
        self.error = error


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Browser:
    def __init__(self, tmpdir, width=1400, height=900, log=None):
        self.tmpdir = tmpdir
        self.proc = None
        self.session = None
        # A port picked free may be taken before chromedriver binds it: try a few.
        for _ in range(5):
            self.port = free_port()
            out = open(log or os.devnull, 'ab')
            self.proc = subprocess.Popen(
                [CHROMEDRIVER, f'--port={self.port}', '--allowed-ips=127.0.0.1'],
                stdout=out, stderr=subprocess.STDOUT)
            out.close()
            if self._driver_ready(30):
                break
            self._stop_driver()
        else:
            raise RuntimeError('chromedriver did not start')
        profile = os.path.join(tmpdir, f'chromium-profile-{self.port}')
        caps = {'capabilities': {'alwaysMatch': {
            'browserName': 'chrome',
            'goog:chromeOptions': {
                'binary': CHROMIUM,
                'args': ['--headless=new', '--no-sandbox', '--disable-gpu',
                         '--disable-dev-shm-usage', '--no-first-run',
                         '--disable-extensions', '--disable-background-networking',
                         f'--window-size={width},{height}', f'--user-data-dir={profile}'],
            },
            'timeouts': {'pageLoad': 60000, 'script': 30000, 'implicit': 0},
        }}}
        try:
            self.session = self._call('POST', '/session', caps, timeout=120)['sessionId']
        except Exception:
            self._stop_driver()
            raise

    def _driver_ready(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f'http://127.0.0.1:{self.port}/status', timeout=2) as r:
                    if json.load(r)['value'].get('ready'):
                        return True
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.1)
        return False

    def _call(self, method, path, body=None, timeout=60):
        data = json.dumps(body if body is not None else {}).encode() if method == 'POST' else None
        req = urllib.request.Request(f'http://127.0.0.1:{self.port}{path}', data=data,
                                     method=method,
                                     headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.load(r)['value']
        except urllib.error.HTTPError as e:
            try:
                v = json.load(e)['value']
                raise WebDriverError(v.get('error', str(e.code)), v.get('message', '')[:300])
            except (ValueError, KeyError):
                raise WebDriverError(str(e.code), str(e)) from None

    def _s(self, path):
        return f'/session/{self.session}{path}'

    # ---- the page ----

    def get(self, url):
        self._call('POST', self._s('/url'), {'url': url}, timeout=90)

    def script(self, js, *args):
        """Runs js (a function body; `arguments` are args) in the page; returns its value."""
        return self._call('POST', self._s('/execute/sync'), {'script': js, 'args': list(args)})

    def find(self, css):
        """The first element matching css, or None."""
        els = self.find_all(css)
        return els[0] if els else None

    def find_all(self, css):
        v = self._call('POST', self._s('/elements'), {'using': 'css selector', 'value': css})
        return [Element(self, e[ELEMENT]) for e in v]

    def text(self, css):
        """The rendered text of the first element matching css, or None: read in one script,
        so a page that redraws meanwhile cannot leave a stale reference."""
        return self.script('const e = document.querySelector(arguments[0]); '
                           'return e ? e.innerText : null', css)

    def click(self, css, seconds=30):
        """Clicks the first element matching css, waiting for it (and finding it again when the
        page redrew it between the finding and the click)."""
        def attempt():
            e = self.find(css)
            if e:
                e.click()
            return e is not None
        self.wait_for(attempt, seconds, 'an element ' + css + ' to click')

    def accept_alert(self):
        self._call('POST', self._s('/alert/accept'))

    def screenshot(self, path):
        png = base64.b64decode(self._call('GET', self._s('/screenshot'), timeout=90))
        with open(path, 'wb') as f:
            f.write(png)

    def wait_for(self, probe, seconds, what):
        """Calls probe until it returns something true (an element that went stale meanwhile
        counts as not yet); raises TimeoutError naming what after seconds."""
        end = time.monotonic() + seconds
        last = None
        while True:
            try:
                v = probe()
                if v:
                    return v
            except WebDriverError as e:
                if e.error != 'stale element reference':
                    raise
                last = e
            if time.monotonic() > end:
                raise TimeoutError(f'waited {seconds} s for {what}' + (f' ({last})' if last else ''))
            time.sleep(0.2)

    # ---- the end ----

    def _stop_driver(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def close(self):
        if self.session:
            try:
                self._call('DELETE', f'/session/{self.session}', timeout=30)
            except (OSError, WebDriverError):
                pass
            self.session = None
        self._stop_driver()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Element:
    def __init__(self, browser, ref):
        self.b = browser
        self.ref = ref

    def _p(self, path):
        return self.b._s(f'/element/{self.ref}{path}')

    @property
    def text(self):
        return self.b._call('GET', self._p('/text'))

    def attr(self, name):
        return self.b._call('GET', self._p(f'/attribute/{name}'))

    def click(self):
        self.b._call('POST', self._p('/click'))

    def find(self, css):
        els = self.find_all(css)
        return els[0] if els else None

    def find_all(self, css):
        v = self.b._call('POST', self._p('/elements'), {'using': 'css selector', 'value': css})
        return [Element(self.b, e[ELEMENT]) for e in v]
