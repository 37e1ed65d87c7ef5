import { SignalEntity } from '../../lib/entities/signal.entity';
import { StepExecutionEntity } from '../../lib/entities/step-execution.entity';
import { WorkflowEntity } from '../../lib/entities/workflow.entity';
import type { ResolvedGenevaDriveOptions } from '../../lib/options/resolved-options.interface';
import { WakeSnapshots } from '../../lib/signals/wake-snapshots';

function snapshotOf(executionId: string) {
  const execution = Object.assign(new StepExecutionEntity(), { id: executionId });
  return { workflow: new WorkflowEntity(), execution, signal: new SignalEntity() };
}

const snapshots = (worker: boolean) => new WakeSnapshots({ worker } as ResolvedGenevaDriveOptions);

describe('WakeSnapshots', () => {
  afterEach(() => jest.useRealTimers());

  it('hands a snapshot out once', () => {
    const kept = snapshots(true);
    const snapshot = snapshotOf('e1');
    kept.remember(snapshot);

    expect(kept.take('e1')).toMatchObject(snapshot);
    expect(kept.take('e1')).toBeNull();
  });

  it('keeps the signal as committed: the caller holds the same object as its return value', () => {
    const kept = snapshots(true);
    const snapshot = snapshotOf('e1');
    snapshot.signal.name = 'go';
    kept.remember(snapshot);
    snapshot.signal.name = 'changed by the caller';

    expect(kept.take('e1')?.signal).toMatchObject({ name: 'go' });
  });

  it('keeps nothing in a process without a worker: no job of it runs here', () => {
    const kept = snapshots(false);
    kept.remember(snapshotOf('e1'));

    expect(kept.take('e1')).toBeNull();
  });

  it('drops a snapshot older than 30 s, unused or not', () => {
    jest.useFakeTimers({ now: 0 });
    const kept = snapshots(true);
    kept.remember(snapshotOf('old'));
    kept.remember(snapshotOf('taken late'));
    jest.setSystemTime(30_001);
    kept.remember(snapshotOf('new'));

    expect(kept.take('taken late')).toBeNull();
    expect(kept.take('new')).not.toBeNull();
  });

  it('holds at most 1,000: the oldest go first', () => {
    const kept = snapshots(true);
    for (let index = 0; index <= 1000; index++) kept.remember(snapshotOf(`e${index}`));

    expect(kept.take('e0')).toBeNull();
    expect(kept.take('e1')).not.toBeNull();
    expect(kept.take('e1000')).not.toBeNull();
  });
});
