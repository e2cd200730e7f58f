from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Fault(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_UNSPECIFIED: _ClassVar[Fault]
    FAULT_TIMEOUT: _ClassVar[Fault]
    FAULT_ILLEGAL_ACTION: _ClassVar[Fault]
    FAULT_UNKNOWN_REQUEST: _ClassVar[Fault]
    FAULT_DISCONNECT: _ClassVar[Fault]
    FAULT_CRASH: _ClassVar[Fault]
    FAULT_MALFORMED: _ClassVar[Fault]
FAULT_UNSPECIFIED: Fault
FAULT_TIMEOUT: Fault
FAULT_ILLEGAL_ACTION: Fault
FAULT_UNKNOWN_REQUEST: Fault
FAULT_DISCONNECT: Fault
FAULT_CRASH: Fault
FAULT_MALFORMED: Fault

class BotMessage(_message.Message):
    __slots__ = ("hello", "action", "ping", "action_replies")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    ACTION_REPLIES_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: ActionReply
    ping: Ping
    action_replies: ActionReplies
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., action_replies: _Optional[_Union[ActionReplies, _Mapping]] = ...) -> None: ...

class ActionReplies(_message.Message):
    __slots__ = ("replies",)
    REPLIES_FIELD_NUMBER: _ClassVar[int]
    replies: _containers.RepeatedCompositeFieldContainer[ActionReply]
    def __init__(self, replies: _Optional[_Iterable[_Union[ActionReply, _Mapping]]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "name", "protocol_version", "max_concurrent", "batches")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    token: str
    name: str
    protocol_version: int
    max_concurrent: int
    batches: bool
    def __init__(self, token: _Optional[str] = ..., name: _Optional[str] = ..., protocol_version: _Optional[int] = ..., max_concurrent: _Optional[int] = ..., batches: _Optional[bool] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("match_id", "request_id", "action")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    action: Action
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "match_start", "action_request", "match_end", "rejected", "pong", "action_requests")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    ACTION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    ACTION_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    match_start: MatchStart
    action_request: ActionRequest
    match_end: MatchEnd
    rejected: Rejected
    pong: Pong
    action_requests: ActionRequests
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., action_request: _Optional[_Union[ActionRequest, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., rejected: _Optional[_Union[Rejected, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., action_requests: _Optional[_Union[ActionRequests, _Mapping]] = ...) -> None: ...

class ActionRequests(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[ActionRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[ActionRequest, _Mapping]]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_name", "protocol_version", "max_concurrent")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    protocol_version: int
    max_concurrent: int
    def __init__(self, bot_name: _Optional[str] = ..., protocol_version: _Optional[int] = ..., max_concurrent: _Optional[int] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ("move_ms", "time_bank_ms", "max_strikes")
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    move_ms: int
    time_bank_ms: int
    max_strikes: int
    def __init__(self, move_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., max_strikes: _Optional[int] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "game", "options", "seat", "seat_names", "limits", "bot_seed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    options: GameOptions
    seat: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    limits: Limits
    bot_seed: int
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., options: _Optional[_Union[GameOptions, _Mapping]] = ..., seat: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ..., bot_seed: _Optional[int] = ...) -> None: ...

class GameOptions(_message.Message):
    __slots__ = ("num_players", "advanced", "ruse", "series")
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ADVANCED_FIELD_NUMBER: _ClassVar[int]
    RUSE_FIELD_NUMBER: _ClassVar[int]
    SERIES_FIELD_NUMBER: _ClassVar[int]
    num_players: int
    advanced: bool
    ruse: bool
    series: bool
    def __init__(self, num_players: _Optional[int] = ..., advanced: _Optional[bool] = ..., ruse: _Optional[bool] = ..., series: _Optional[bool] = ...) -> None: ...

class ActionRequest(_message.Message):
    __slots__ = ("match_id", "request_id", "observation", "legal_actions", "move_ms", "time_bank_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    observation: Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    move_ms: int
    time_bank_ms: int
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., move_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "scores", "ranks", "reason", "final_observation")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FINAL_OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    reason: str
    final_observation: Observation
    def __init__(self, match_id: _Optional[str] = ..., scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., reason: _Optional[str] = ..., final_observation: _Optional[_Union[Observation, _Mapping]] = ...) -> None: ...

class Rejected(_message.Message):
    __slots__ = ("match_id", "request_id", "fault", "detail", "played_instead")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    PLAYED_INSTEAD_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    fault: Fault
    detail: str
    played_instead: Action
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., fault: _Optional[_Union[Fault, str]] = ..., detail: _Optional[str] = ..., played_instead: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class Card(_message.Message):
    __slots__ = ("id", "colour", "value")
    ID_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    id: int
    colour: str
    value: int
    def __init__(self, id: _Optional[int] = ..., colour: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("balloon", "boom", "highcard")
    BALLOON_FIELD_NUMBER: _ClassVar[int]
    BOOM_FIELD_NUMBER: _ClassVar[int]
    HIGHCARD_FIELD_NUMBER: _ClassVar[int]
    balloon: BalloonObservation
    boom: BoomObservation
    highcard: HighCardObservation
    def __init__(self, balloon: _Optional[_Union[BalloonObservation, _Mapping]] = ..., boom: _Optional[_Union[BoomObservation, _Mapping]] = ..., highcard: _Optional[_Union[HighCardObservation, _Mapping]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("balloon", "boom", "highcard")
    BALLOON_FIELD_NUMBER: _ClassVar[int]
    BOOM_FIELD_NUMBER: _ClassVar[int]
    HIGHCARD_FIELD_NUMBER: _ClassVar[int]
    balloon: BalloonAction
    boom: BoomAction
    highcard: HighCardAction
    def __init__(self, balloon: _Optional[_Union[BalloonAction, _Mapping]] = ..., boom: _Optional[_Union[BoomAction, _Mapping]] = ..., highcard: _Optional[_Union[HighCardAction, _Mapping]] = ...) -> None: ...

class BalloonAction(_message.Message):
    __slots__ = ("play", "drop_out")
    PLAY_FIELD_NUMBER: _ClassVar[int]
    DROP_OUT_FIELD_NUMBER: _ClassVar[int]
    play: Card
    drop_out: bool
    def __init__(self, play: _Optional[_Union[Card, _Mapping]] = ..., drop_out: _Optional[bool] = ...) -> None: ...

class BoomAction(_message.Message):
    __slots__ = ("cards", "ruse")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    RUSE_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    ruse: bool
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., ruse: _Optional[bool] = ...) -> None: ...

class BalloonPlayed(_message.Message):
    __slots__ = ("seat", "card", "turn")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Card
    turn: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., turn: _Optional[int] = ...) -> None: ...

class BalloonObservation(_message.Message):
    __slots__ = ("seat", "num_players", "round", "turn", "start_seat", "to_act", "hand", "hand_sizes", "face_up", "table", "dropped_out", "chips", "chips_in_middle", "first_drop_out_chip", "totals")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    START_SEAT_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    DROPPED_OUT_FIELD_NUMBER: _ClassVar[int]
    CHIPS_FIELD_NUMBER: _ClassVar[int]
    CHIPS_IN_MIDDLE_FIELD_NUMBER: _ClassVar[int]
    FIRST_DROP_OUT_CHIP_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    num_players: int
    round: int
    turn: int
    start_seat: int
    to_act: int
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    face_up: _containers.RepeatedCompositeFieldContainer[Card]
    table: _containers.RepeatedCompositeFieldContainer[BalloonPlayed]
    dropped_out: _containers.RepeatedScalarFieldContainer[int]
    chips: _containers.RepeatedScalarFieldContainer[int]
    chips_in_middle: int
    first_drop_out_chip: bool
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., num_players: _Optional[int] = ..., round: _Optional[int] = ..., turn: _Optional[int] = ..., start_seat: _Optional[int] = ..., to_act: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., face_up: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., table: _Optional[_Iterable[_Union[BalloonPlayed, _Mapping]]] = ..., dropped_out: _Optional[_Iterable[int]] = ..., chips: _Optional[_Iterable[int]] = ..., chips_in_middle: _Optional[int] = ..., first_drop_out_chip: _Optional[bool] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class BoomRevealed(_message.Message):
    __slots__ = ("cards", "ruse")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    RUSE_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    ruse: bool
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., ruse: _Optional[bool] = ...) -> None: ...

class BoomParadiseCard(_message.Message):
    __slots__ = ("card", "face_up")
    CARD_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_FIELD_NUMBER: _ClassVar[int]
    card: Card
    face_up: bool
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ..., face_up: _Optional[bool] = ...) -> None: ...

class BoomParadise(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[BoomParadiseCard]
    def __init__(self, cards: _Optional[_Iterable[_Union[BoomParadiseCard, _Mapping]]] = ...) -> None: ...

class BoomObservation(_message.Message):
    __slots__ = ("seat", "num_players", "game_number", "round", "step", "guard", "guard_limits", "guards_left", "to_play", "hand", "has_ruse", "hand_sizes", "acted", "revealed", "paradise", "discarded", "scores", "series_totals", "guards_used")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    GAME_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    GUARD_FIELD_NUMBER: _ClassVar[int]
    GUARD_LIMITS_FIELD_NUMBER: _ClassVar[int]
    GUARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    TO_PLAY_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAS_RUSE_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    ACTED_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    PARADISE_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    SERIES_TOTALS_FIELD_NUMBER: _ClassVar[int]
    GUARDS_USED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    num_players: int
    game_number: int
    round: int
    step: int
    guard: int
    guard_limits: _containers.RepeatedScalarFieldContainer[int]
    guards_left: int
    to_play: int
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    has_ruse: bool
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    acted: _containers.RepeatedScalarFieldContainer[bool]
    revealed: _containers.RepeatedCompositeFieldContainer[BoomRevealed]
    paradise: _containers.RepeatedCompositeFieldContainer[BoomParadise]
    discarded: _containers.RepeatedCompositeFieldContainer[Card]
    scores: _containers.RepeatedScalarFieldContainer[int]
    series_totals: _containers.RepeatedScalarFieldContainer[int]
    guards_used: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., num_players: _Optional[int] = ..., game_number: _Optional[int] = ..., round: _Optional[int] = ..., step: _Optional[int] = ..., guard: _Optional[int] = ..., guard_limits: _Optional[_Iterable[int]] = ..., guards_left: _Optional[int] = ..., to_play: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., has_ruse: _Optional[bool] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., acted: _Optional[_Iterable[bool]] = ..., revealed: _Optional[_Iterable[_Union[BoomRevealed, _Mapping]]] = ..., paradise: _Optional[_Iterable[_Union[BoomParadise, _Mapping]]] = ..., discarded: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., series_totals: _Optional[_Iterable[int]] = ..., guards_used: _Optional[_Iterable[int]] = ...) -> None: ...

class HighCardAction(_message.Message):
    __slots__ = ("play",)
    PLAY_FIELD_NUMBER: _ClassVar[int]
    play: Card
    def __init__(self, play: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class HighCardObservation(_message.Message):
    __slots__ = ("seat", "num_players", "round", "to_act", "hand", "played", "scores")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    seat: int
    num_players: int
    round: int
    to_act: int
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    played: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., num_players: _Optional[int] = ..., round: _Optional[int] = ..., to_act: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., played: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("match_id", "index", "kind", "seat", "data", "public_observation", "final")
    class DataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    index: int
    kind: str
    seat: int
    data: _containers.ScalarMap[str, str]
    public_observation: Observation
    final: bool
    def __init__(self, match_id: _Optional[str] = ..., index: _Optional[int] = ..., kind: _Optional[str] = ..., seat: _Optional[int] = ..., data: _Optional[_Mapping[str, str]] = ..., public_observation: _Optional[_Union[Observation, _Mapping]] = ..., final: _Optional[bool] = ...) -> None: ...
