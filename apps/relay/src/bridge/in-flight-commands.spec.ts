import { InFlightCommands, type SentCommand } from './in-flight-commands';

const sent = (requestId: string, connId = 'c1'): SentCommand => ({
  requestId,
  connId,
  tokenPrefix: 'p',
  path: '/tap',
  method: 'POST',
  phoneConfirms: false,
  started: 0,
  timer: setTimeout(() => undefined, 0),
  resolve: () => undefined,
  reject: () => undefined,
});

describe('InFlightCommands', () => {
  it('holds a command through its confirmation, then as sent, under one id', () => {
    const f = new InFlightCommands();
    const resolve = jest.fn();
    f.confirming('r1', { connId: 'c1', tokenPrefix: 'p', resolve });
    expect(f.confirmation('r1')).toBeDefined();
    expect(f.command('r1')).toBeUndefined();
    expect(f.confirmationsOn('c1')).toEqual(['r1']);
    expect(f.confirmationsOn('c2')).toEqual([]);
    f.endConfirmation('r1')?.resolve('confirmation_allowed');
    expect(resolve).toHaveBeenCalledWith('confirmation_allowed');
    expect(f.endConfirmation('r1')).toBeUndefined();

    const cmd = sent('r1');
    f.sent(cmd);
    expect(f.confirmation('r1')).toBeUndefined();
    expect(f.command('r1')).toBe(cmd);
    expect(f.sentCount).toBe(1);
    expect(f.settle(cmd)).toBe(true);
    expect(f.settle(cmd)).toBe(false);
    expect(f.sentCommands()).toEqual([]);
  });

  it('a settled id taken by a new command is not settled by the old one', () => {
    const f = new InFlightCommands();
    const old = sent('r2');
    const fresh = sent('r2');
    f.sent(old);
    f.settle(old);
    f.sent(fresh);
    expect(f.settle(old)).toBe(false);
    expect(f.command('r2')).toBe(fresh);
  });
});
