#!/usr/bin/env python3
"""Drive a page in headless Chromium over the DevTools protocol, standard library only (no pip on this machine).

    cdp.py CHROMIUM URL SCRIPT_FILE [TIMEOUT_S]

Starts CHROMIUM headless with a fresh profile and --remote-debugging-port=0, opens URL, waits until the page
finished a render (document.body.dataset.rendered), then runs SCRIPT_FILE: JavaScript whose last expression is a
Promise (or value) of a string; the string is printed and "OK..." means success (exit 0), anything else exit 1.
The WebSocket client is the minimum RFC 6455 needs: masked text frames out, unmasked frames in.
"""
import base64, json, os, shutil, socket, struct, subprocess, sys, tempfile, time, urllib.request


class Page:
    def __init__(self, ws_url):
        rest = ws_url[len("ws://"):]
        hostport, path = rest.split("/", 1)
        host, port = hostport.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, hostport, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("websocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("websocket handshake refused: %r" % head[:200])
        self.next_id = 0

    def _send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise RuntimeError("websocket closed")
            buf += chunk
        return buf

    def _recv(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            if b0 & 0x0F == 0x8:
                raise RuntimeError("websocket closed by the browser")
            message += payload
            if b0 & 0x80:
                return message.decode()

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self._send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self._recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg["result"]

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("script failed: %s" % json.dumps(r["exceptionDetails"])[:500])
        return r["result"].get("value")


def main():
    chromium, url, script_file = sys.argv[1:4]
    timeout_s = float(sys.argv[4]) if len(sys.argv) > 4 else 60
    profile = tempfile.mkdtemp(prefix="rdmablock-cdp-")
    proc = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                             "--no-first-run", "--disable-background-networking", "--disable-component-update",
                             "--disable-sync", "--disable-extensions", "--user-data-dir=" + profile,
                             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                             "--remote-allow-origins=*", "--window-size=1400,1000", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + timeout_s
        port_file = os.path.join(profile, "DevToolsActivePort")
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port, timeout=10))
        page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
        page.call("Page.enable")
        page.call("Page.navigate", url=url)
        while page.evaluate("document.body && document.body.dataset.rendered ? 'yes' : 'no'") != "yes":
            if time.time() > deadline:
                raise RuntimeError("the page did not render within %s s" % timeout_s)
            time.sleep(0.2)
        result = page.evaluate(open(script_file).read())
        print(result)
        return 0 if isinstance(result, str) and result.startswith("OK") else 1
    except Exception as e:  # noqa: BLE001 - any failure is the test's failure, said in one line
        print("cdp: %s" % e)
        return 1
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
