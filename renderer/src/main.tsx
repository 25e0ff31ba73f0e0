import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { chooseTransport } from './api/transport';
import { App } from './components/App';
import { setConnectionStatus } from './state/connection';
import './styles.css';

const transport = chooseTransport(setConnectionStatus);
const root = document.getElementById('root');
if (!root) throw new Error('corral: #root is missing from index.html');

createRoot(root).render(
  <StrictMode>
    <App transport={transport} />
  </StrictMode>,
);
