package ahpclient

import (
	"context"
	"encoding/json"
	"fmt"
)

// decodeResult decodes a successful result into v, reporting a malformed result as a transport-level error.
func decodeResult(method string, raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("ahpclient: decode %s result %s: %w", method, raw, err)
	}
	return nil
}

// Initialize sends `initialize`. Nil versions offer DefaultProtocolVersions; an
// empty non-nil slice is sent as []. Nil initialSubs omits initialSubscriptions.
func (c *Client) Initialize(ctx context.Context, clientID string, versions []string, initialSubs []string) (InitializeResult, *RPCError, error) {
	if versions == nil {
		versions = DefaultProtocolVersions
	}
	return c.InitializeWith(ctx, InitializeParams{
		ProtocolVersions:     versions,
		ClientID:             clientID,
		InitialSubscriptions: initialSubs,
	})
}

// InitializeWith sends `initialize` with full control over the params.
func (c *Client) InitializeWith(ctx context.Context, p InitializeParams) (InitializeResult, *RPCError, error) {
	if p.Channel == "" {
		p.Channel = RootChannel
	}
	c.mu.Lock()
	c.clientID = p.ClientID
	c.mu.Unlock()
	raw, rpcErr, err := c.Call(ctx, "initialize", p)
	if err != nil || rpcErr != nil {
		return InitializeResult{}, rpcErr, err
	}
	var res InitializeResult
	if err := decodeResult("initialize", raw, &res); err != nil {
		return InitializeResult{}, nil, err
	}
	c.mu.Lock()
	c.noteSeqLocked(res.ServerSeq)
	c.mu.Unlock()
	return res, nil, nil
}

// Reconnect sends `reconnect` on this (new) connection. Nil subs are sent as [].
func (c *Client) Reconnect(ctx context.Context, clientID string, lastSeen uint64, subs []string) (ReconnectResult, *RPCError, error) {
	if subs == nil {
		subs = []string{}
	}
	c.mu.Lock()
	c.clientID = clientID
	c.mu.Unlock()
	raw, rpcErr, err := c.Call(ctx, "reconnect", map[string]any{
		"channel":           RootChannel,
		"clientId":          clientID,
		"lastSeenServerSeq": lastSeen,
		"subscriptions":     subs,
	})
	if err != nil || rpcErr != nil {
		return ReconnectResult{}, rpcErr, err
	}
	var res ReconnectResult
	if err := decodeResult("reconnect", raw, &res); err != nil {
		return ReconnectResult{}, nil, err
	}
	c.mu.Lock()
	for _, e := range res.Actions {
		c.noteSeqLocked(e.ServerSeq)
	}
	for _, s := range res.Snapshots {
		c.noteSeqLocked(s.FromSeq)
	}
	c.mu.Unlock()
	return res, nil, nil
}

// Subscribe sends `subscribe` and returns the snapshot (zero for a stateless channel).
func (c *Client) Subscribe(ctx context.Context, channel string) (Snapshot, *RPCError, error) {
	raw, rpcErr, err := c.Call(ctx, "subscribe", map[string]any{"channel": channel})
	if err != nil || rpcErr != nil {
		return Snapshot{}, rpcErr, err
	}
	var res struct {
		Snapshot Snapshot `json:"snapshot"`
	}
	if err := decodeResult("subscribe", raw, &res); err != nil {
		return Snapshot{}, nil, err
	}
	return res.Snapshot, nil, nil
}

// Unsubscribe sends the `unsubscribe` notification.
func (c *Client) Unsubscribe(ctx context.Context, channel string) error {
	return c.Notify(ctx, "unsubscribe", map[string]any{"channel": channel})
}

// CreateTerminal sends `createTerminal`.
func (c *Client) CreateTerminal(ctx context.Context, p CreateParams) (*RPCError, error) {
	_, rpcErr, err := c.Call(ctx, "createTerminal", p)
	return rpcErr, err
}

// DisposeTerminal sends `disposeTerminal`.
func (c *Client) DisposeTerminal(ctx context.Context, channel string) (*RPCError, error) {
	_, rpcErr, err := c.Call(ctx, "disposeTerminal", map[string]any{"channel": channel})
	return rpcErr, err
}

// Authenticate sends `authenticate`; a nil expiresIn is omitted.
func (c *Client) Authenticate(ctx context.Context, resource, token string, expiresIn *int) (*RPCError, error) {
	params := map[string]any{"channel": RootChannel, "resource": resource, "token": token}
	if expiresIn != nil {
		params["expiresIn"] = *expiresIn
	}
	_, rpcErr, err := c.Call(ctx, "authenticate", params)
	return rpcErr, err
}

// Ping sends `ping`.
func (c *Client) Ping(ctx context.Context) (*RPCError, error) {
	_, rpcErr, err := c.Call(ctx, "ping", map[string]any{"channel": RootChannel})
	return rpcErr, err
}

// Dispatch sends `dispatchAction` with the next clientSeq (1, 2, …) and returns that clientSeq.
func (c *Client) Dispatch(ctx context.Context, channel string, action any) (int64, error) {
	seq := c.nextSeq.Add(1) - 1
	return seq, c.DispatchSeq(ctx, channel, seq, action)
}

// DispatchSeq sends `dispatchAction` with an explicit clientSeq (e.g. a retry);
// it does not move the counter Dispatch uses.
func (c *Client) DispatchSeq(ctx context.Context, channel string, clientSeq int64, action any) error {
	return c.Notify(ctx, "dispatchAction", map[string]any{
		"channel":   channel,
		"clientSeq": clientSeq,
		"action":    action,
	})
}

// SetNextClientSeq sets the clientSeq the next Dispatch uses (e.g. to continue a
// sequence on a reconnected connection).
func (c *Client) SetNextClientSeq(seq int64) { c.nextSeq.Store(seq) }
