"""scripts/rss-breakdown: a process's resident memory by mapping, and its executable's resident pages by ELF section
and by library (see the script for usage)."""
import bisect
import collections
import os
import re
import struct
import subprocess
import sys
import time

PAGE = os.sysconf('SC_PAGE_SIZE')


def smaps(pid):
    mappings, current = [], None
    with open(f'/proc/{pid}/smaps') as file:
        for line in file:
            if re.match(r'^[0-9a-f]+-[0-9a-f]+ ', line):
                fields = line.split(None, 5)
                low, high = (int(x, 16) for x in fields[0].split('-'))
                current = {'low': low, 'high': high, 'perms': fields[1], 'offset': int(fields[2], 16),
                           'path': fields[5].strip() if len(fields) > 5 else ''}
                mappings.append(current)
            else:
                key, value = line.split(':', 1)
                if value.strip().endswith('kB'):
                    current[key] = int(value.split()[0])
    return mappings


def name(mapping):
    path = mapping['path']
    if not path:
        return '(anonymous: malloc arenas, thread stacks)'
    return path if path.startswith('[') else os.path.basename(path)


def by_mapping(pid, field='Rss'):
    groups = collections.defaultdict(collections.Counter)
    for mapping in smaps(pid):
        group = groups[name(mapping)]
        group['resident'] += mapping.get(field, 0)
        group['anonymous'] += mapping.get('Anonymous', 0)
    return groups


def print_by_mapping(pid):
    groups = by_mapping(pid)
    print('| mapping | resident kB | file-backed kB | anonymous kB |')
    print('| --- | --- | --- | --- |')
    for key, group in sorted(groups.items(), key=lambda item: -item[1]['resident']):
        if group['resident']:
            print(f"| {key} | {group['resident']} | {group['resident'] - group['anonymous']} | {group['anonymous']} |")
    total = sum(g['resident'] for g in groups.values())
    anonymous = sum(g['anonymous'] for g in groups.values())
    print(f'| **total** | **{total}** | **{total - anonymous}** | **{anonymous}** |')


def resident_pages(pid, low, high):
    with open(f'/proc/{pid}/pagemap', 'rb') as file:
        file.seek(low // PAGE * 8)
        data = file.read((high - low) // PAGE * 8)
    for index in range(len(data) // 8):
        (entry,) = struct.unpack_from('<Q', data, index * 8)
        if entry >> 63 & 1:
            yield low + index * PAGE


def load_segments(binary):
    text = subprocess.run(['readelf', '-lW', binary], capture_output=True, text=True, check=True).stdout
    return [(int(f[1], 16), int(f[2], 16), int(f[4], 16)) for f in (line.split() for line in text.splitlines())
            if f and f[0] == 'LOAD']


def sections(binary):
    text = subprocess.run(['readelf', '-SW', binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in text.splitlines():
        match = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)', line)
        if match and int(match.group(2), 16):
            found.append((int(match.group(2), 16), int(match.group(3), 16), match.group(1)))
    return sorted(found)


def library(symbol):
    """The library a statically linked symbol comes from, by its name."""
    swift = re.match(r'^\$s(\d+)([A-Za-z_][A-Za-z0-9_]*)', symbol)
    if swift and not symbol.startswith(('$ss', '$sS')):
        return 'Swift module ' + swift.group(2)[:int(swift.group(1))]
    if symbol.startswith(('$ss', '$sS', 'swift_', '_swift', '__swift', '_ZN5swift')):
        return 'Swift runtime and standard library'
    if 'BoringSSL' in symbol:
        return 'BoringSSL (NIOSSL)'
    if symbol.startswith('_ZN6icu') or re.search(r'_7\d$', symbol) or symbol.startswith(('icu', 'u_', 'ucol', 'udat', 'uloc')):
        return 'ICU (FoundationICU)'
    if symbol.startswith('_Z'):
        return 'C++ (other: libstdc++ parts, the Swift runtime\'s C++)'
    return 'C (other)'


def print_executable(pid, binary):
    executable = os.path.realpath(f'/proc/{pid}/exe')
    segments, section_list = load_segments(binary), sections(binary)
    symbols = []
    nm = subprocess.run(['nm', '-S', '--defined-only', '-n', binary], capture_output=True, text=True, check=True).stdout
    for line in nm.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in 'tTrRdDbBvVwW':
            symbols.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    symbols.sort()
    starts = [symbol[0] for symbol in symbols]
    per_section, per_library = collections.Counter(), collections.Counter()
    for mapping in smaps(pid):
        if not mapping['path'] or os.path.realpath(mapping['path']) != executable:
            continue
        for address in resident_pages(pid, mapping['low'], mapping['high']):
            offset = address - mapping['low'] + mapping['offset']
            vaddr = next((v + offset - o for o, v, size in segments if o <= offset < o + max(size, 1)), None)
            if vaddr is None:
                continue
            section = next((n for a, size, n in section_list if a <= vaddr < a + size), '(between sections)')
            per_section[section] += PAGE
            covered = collections.Counter()
            index = max(bisect.bisect_right(starts, vaddr) - 1, 0)
            while index < len(symbols) and symbols[index][0] < vaddr + PAGE:
                start, size, symbol = symbols[index]
                low, high = max(start, vaddr), min(start + size, vaddr + PAGE)
                if high > low:
                    covered[library(symbol)] += high - low
                index += 1
            rest = PAGE - sum(covered.values())
            if rest > 0:
                covered[f'(no symbol: {section})'] += rest
            for key, size in covered.items():
                per_library[key] += size
    print('\n| section of the executable | resident kB |\n| --- | --- |')
    for section, size in per_section.most_common():
        print(f'| {section} | {size // 1024} |')
    print('\n| library (statically linked) or section without symbols | resident kB |\n| --- | --- |')
    for key, size in per_library.most_common(30):
        print(f'| {key} | {size / 1024:.0f} |')


def working_set(pid, seconds):
    with open(f'/proc/{pid}/clear_refs', 'w') as file:
        file.write('1')
    time.sleep(seconds)
    groups = by_mapping(pid, 'Referenced')
    resident = by_mapping(pid)
    print(f'| mapping | resident kB | referenced in {seconds:g} s, kB |\n| --- | --- | --- |')
    for key, group in sorted(resident.items(), key=lambda item: -item[1]['resident']):
        if group['resident'] >= 64:
            print(f"| {key} | {group['resident']} | {groups[key]['resident']} |")


def main(arguments):
    if arguments and arguments[0] == '--working-set':
        working_set(arguments[1], float(arguments[2]) if len(arguments) > 2 else 30)
        return
    if not arguments:
        sys.exit('usage: scripts/rss-breakdown PID [UNSTRIPPED-BINARY] | --working-set PID [SECONDS]')
    pid = arguments[0]
    binary = arguments[1] if len(arguments) > 1 else f'/proc/{pid}/exe'
    print_by_mapping(pid)
    print_executable(pid, binary)


main(sys.argv[1:])
