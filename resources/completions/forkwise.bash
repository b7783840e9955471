# bash completion for forkwise (installed as /usr/share/bash-completion/completions/forkwise)
_forkwise() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
    fi
    case $prev in
        --store) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --token-file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --to) COMPREPLY=($(compgen -W "claude codex pi" -- "$cur")); return ;;
        --from) COMPREPLY=($(compgen -W "claude codex pi forkwise" -- "$cur")); return ;;
        --out) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --connect|--listen|--token|--id|--title|--cwd|--boundary|--child|--at|--message) return ;;
    esac
    local i command="" action=""
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --store|--connect|--token|--token-file|--listen) ((i++)) ;;
            -*) ;;
            *) if [ -z "$command" ]; then command=${words[i]}; elif [ -z "$action" ]; then action=${words[i]}; fi ;;
        esac
    done
    local common="--store --json --connect --token-file --help"
    case $command in
        "")
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--help --version --store --demo --self-test --connect --token-file" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "sessions host" -- "$cur") $(compgen -f -X '!*.jsonl' -- "$cur") $(compgen -d -- "$cur"))
            fi ;;
        host) COMPREPLY=($(compgen -W "--store --listen --allow-remote --token-file --help" -- "$cur")) ;;
        sessions)
            case $action in
                "") COMPREPLY=($(compgen -W "list show new fork truncate import export delete prompt approve --help" -- "$cur")) ;;
                export) COMPREPLY=($(compgen -W "$common --to --out" -- "$cur")) ;;
                new) COMPREPLY=($(compgen -W "$common --id --title --cwd" -- "$cur")) ;;
                fork) COMPREPLY=($(compgen -W "$common --boundary --child --at --message --exclude-message --replace" -- "$cur")) ;;
                truncate) COMPREPLY=($(compgen -W "$common --message --exclude-message" -- "$cur")) ;;
                approve) COMPREPLY=($(compgen -W "$common --deny" -- "$cur")) ;;
                import) if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$common --from" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi ;;
                *) COMPREPLY=($(compgen -W "$common" -- "$cur")) ;;
            esac ;;
    esac
}
complete -F _forkwise forkwise
