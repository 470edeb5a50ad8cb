import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app';
import { SignInPage } from './app/layout/sign-in-page';
import { AppProvider } from './app/provider';
import { completeSignIn, useSignIn } from './lib/sign-in';
import { applyTheme } from './lib/theme';
import './styles.css';

applyTheme();

/** The console once signed in; the sign-in page otherwise (its live stream and queries stop with it). */
function Root() {
  const signIn = useSignIn();
  if (!signIn.signedIn) return <SignInPage reason={signIn.reason} />;
  return (
    <AppProvider>
      <App />
    </AppProvider>
  );
}

void completeSignIn().finally(() => {
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <Root />
    </StrictMode>,
  );
});
