/**
 * A minimal Dashboard 2 client for the demo test: socket.io over HTTP long-polling
 * (engine.io v4), as a browser starts. It emits what a widget emits when the user moves it
 * (`widget-change`, `widget-action`), asks for a widget's stored messages (`widget-load`)
 * and awaits the events the server sends (`msg-input:<id>`, `widget-load:<id>`).
 */

export class DashboardClient {
  private sid = '';
  private readonly events: Array<[string, ...any[]]> = [];
  private readonly listeners = new Set<() => void>();
  private polling?: Promise<void>;
  private closed = false;

  constructor(private readonly base: string) {}

  private url(): string {
    return `${this.base}/dashboard/socket.io/?EIO=4&transport=polling${this.sid ? `&sid=${this.sid}` : ''}`;
  }

  async connect(): Promise<void> {
    const open = await (await fetch(this.url())).text();
    if (!open.startsWith('0')) throw new Error(`unexpected engine.io open packet ${open.slice(0, 100)}`);
    this.sid = JSON.parse(open.slice(1)).sid;
    await this.post('40');
    this.polling = this.poll();
  }

  private async post(packet: string): Promise<void> {
    const response = await fetch(this.url(), {
      method: 'POST',
      body: packet,
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
    });
    if (!response.ok) throw new Error(`socket.io POST ${response.status}`);
    await response.text();
  }

  /** Long-polls until closed, answering pings and recording events. */
  private async poll(): Promise<void> {
    while (!this.closed) {
      let text: string;
      try {
        text = await (await fetch(this.url())).text();
      } catch {
        return;
      }
      for (const p of text.split('\x1e')) {
        if (p === '2') await this.post('3');
        else if (p.startsWith('42')) {
          this.events.push(JSON.parse(p.slice(2)));
          for (const l of [...this.listeners]) l();
        } else if (p.startsWith('1') || p.startsWith('41')) return;
      }
    }
  }

  emit(event: string, ...args: unknown[]): Promise<void> {
    return this.post('42' + JSON.stringify([event, ...args]));
  }

  /** Resolves with the arguments of the first event named `name` whose arguments pass `test`. */
  waitFor(name: string, test: (...args: any[]) => boolean, ms: number): Promise<any[]> {
    let seen = 0;
    return new Promise((resolve, reject) => {
      const check = () => {
        for (; seen < this.events.length; seen++) {
          const [n, ...args] = this.events[seen];
          if (n === name && test(...args)) return finish(undefined, args);
        }
      };
      const timer = setTimeout(
        () =>
          finish(
            new Error(
              `no matching ${name} event within ${ms} ms; last: ${this.events
                .map((e) => e[0])
                .slice(-10)
                .join(', ')}`,
            ),
          ),
        ms,
      );
      const finish = (err?: Error, args?: any[]) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (err) reject(err);
        else resolve(args!);
      };
      this.listeners.add(check);
      check();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.post('1');
    } catch {
      /* already gone */
    }
    await this.polling;
  }
}
