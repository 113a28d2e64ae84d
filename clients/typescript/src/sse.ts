/**
 * A Server-Sent Events parser for the subset the service sends (`id:`,
 * `event:`, `data:` lines, comment lines, frames ended by a blank line):
 * text in, in any chunks; the `data` of each complete frame out. No
 * runtime dependency, so it runs wherever `fetch` streams a body.
 *
 * @module
 */

/** Parses a stream's text into the `data` of its frames; see the module documentation. */
export class SseParser {
  #buf = "";

  /** The data of the frames that `text` completes, in order (frames without `data`, the keep-alive, skipped). */
  feed(text: string): string[] {
    this.#buf = (this.#buf + text).replace(/\r\n/g, "\n");
    const frames = this.#buf.split("\n\n");
    this.#buf = frames.pop() ?? "";
    const out: string[] = [];
    for (const frame of frames) {
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => (line.startsWith("data: ") ? line.slice(6) : line.slice(5)));
      if (data.length > 0) out.push(data.join("\n"));
    }
    return out;
  }
}
