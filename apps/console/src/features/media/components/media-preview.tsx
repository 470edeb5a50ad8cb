import { useState } from 'react';
import { mediaPreviewUrl } from '../api/media-preview';

/** The image itself, inline, with loading and error states (an <img> reports no status, so one message). */
export function MediaPreview({ tokenPrefix, name }: { tokenPrefix: string; name: string }) {
  const [state, setState] = useState<'loading' | 'loaded' | 'error'>('loading');
  return (
    <div className="media-preview" data-testid="media-preview" aria-busy={state === 'loading' || undefined}>
      {state === 'loading' ? (
        <div className="muted small" role="status">
          Loading preview…
        </div>
      ) : null}
      {state === 'error' ? (
        <div className="error-text small" role="alert">
          The preview could not be shown: the entry may have expired, or its file changed since it was registered.
        </div>
      ) : (
        <img
          src={mediaPreviewUrl(tokenPrefix)}
          alt={name}
          className="media-preview-img"
          hidden={state !== 'loaded'}
          onLoad={() => setState('loaded')}
          onError={() => setState('error')}
        />
      )}
    </div>
  );
}
